using System.Text.Json;
using Broker.Core.Auth;
using Broker.TestKit;
using NATS.Client.Core;
using Xunit;

namespace Broker.Core.Tests.Routes;

/// <summary>
/// <c>cluster.permissions</c> on one member of a two-member cluster mixing our broker and nats-server 2.9.10, each kind
/// taking the permissions in turn: <c>import</c> decides which of its clients' interest it sends (so which messages the
/// other member sends it), <c>export</c> which of the other member's interest it takes, and a message on a denied export
/// subject is not sent even to a wider interest. Every denied message is followed by an allowed one on the same
/// connection, so its absence is seen once the allowed one arrives.
/// </summary>
public sealed class RoutePermissionTests
{
    public static TheoryData<ServerKind> Kinds => new() { ServerKind.Ours, ServerKind.Reference };

    /// <summary>import: pub.> but not pub.secret; export: out.> but not out.secret.</summary>
    internal static readonly RouteSetup Permissions = new(
        _ => "  permissions { import: { allow: [\"pub.>\"], deny: [\"pub.secret\"] }, export: { allow: [\"out.>\"], deny: [\"out.secret\"] } }\n",
        (cluster, _) => cluster.Permissions = new PermissionsOptions
        {
            Publish = new SubjectPermissionOptions { Allow = ["pub.>"], Deny = ["pub.secret"] },
            Subscribe = new SubjectPermissionOptions { Allow = ["out.>"], Deny = ["out.secret"] },
        });

    [Theory]
    [MemberData(nameof(Kinds))]
    public async Task Denied_subjects_do_not_cross_in_either_direction_and_allowed_ones_do(ServerKind restrictedKind)
    {
        var otherKind = restrictedKind == ServerKind.Ours ? ServerKind.Reference : ServerKind.Ours;
        await using var a = await ClusterNode.StartAsync(restrictedKind, "A", setup: Permissions);
        await using var b = await ClusterNode.StartAsync(otherKind, "B", [a.RouteUrl()]);
        await a.WaitForRoutesAsync(1);
        await b.WaitForRoutesAsync(1);
        await using var onA = await NatsClients.ConnectAsync(a.ClientUrl, "a");
        await using var onB = await NatsClients.ConnectAsync(b.ClientUrl, "b");

        // Import: A asks B only for what it may import; the denied interest went before the allowed one.
        await using var secretAtA = await onA.SubscribeCoreAsync<string>("pub.secret");
        await using var otherAtA = await onA.SubscribeCoreAsync<string>("other.x");
        await using var okAtA = await onA.SubscribeCoreAsync<string>("pub.ok");
        await onA.PingAsync();
        await b.WaitForRoutesAsync(1, "pub.ok");
        Assert.Equal(["pub.ok"], await RouteInterestAsync(b));
        await onB.PublishAsync("pub.secret", "no");
        await onB.PublishAsync("other.x", "no");
        await onB.PublishAsync("pub.ok", "yes");
        Assert.Equal("yes", (await okAtA.NextAsync()).Data);
        await onA.PingAsync();
        Assert.False(secretAtA.Msgs.TryRead(out _), "pub.secret crossed although A does not import it");
        Assert.False(otherAtA.Msgs.TryRead(out _), "other.x crossed although A does not import it");

        // Export: A takes B's interest only where it may export, and keeps out.secret from a wider interest.
        await using var secretAtB = await onB.SubscribeCoreAsync<string>("out.secret");
        await using var nopeAtB = await onB.SubscribeCoreAsync<string>("nope.x");
        await using var wideAtB = await onB.SubscribeCoreAsync<string>("out.>");
        await onB.PingAsync();
        await a.WaitForRoutesAsync(1, "out.>");
        Assert.Equal(["out.>"], await RouteInterestAsync(a));
        await onA.PublishAsync("out.secret", "no");
        await onA.PublishAsync("nope.x", "no");
        await onA.PublishAsync("out.ok", "yes");
        var first = await wideAtB.NextAsync();
        Assert.Equal(("out.ok", "yes"), (first.Subject, first.Data));
        await onB.PingAsync();
        Assert.False(secretAtB.Msgs.TryRead(out _), "out.secret crossed although A does not export it");
        Assert.False(nopeAtB.Msgs.TryRead(out _), "nope.x crossed although A does not export it");
    }

    // The member's interest a route shows in /routez (the system account's left out).
    private static async Task<string[]> RouteInterestAsync(ClusterNode node)
    {
        var routez = await node.RoutezAsync();
        return [.. routez.GetProperty("routes").EnumerateArray()
            .SelectMany(r => r.TryGetProperty("subscriptions_list", out var list) && list.ValueKind == JsonValueKind.Array ? list.EnumerateArray().Select(s => s.GetString()!) : [])
            .Where(s => !s.StartsWith("$SYS", StringComparison.Ordinal) && !s.StartsWith("_INBOX", StringComparison.Ordinal))
            .Order(StringComparer.Ordinal)];
    }
}
