using System.Globalization;
using System.Net;
using System.Text.Json;
using Broker.TestKit;
using Xunit;

namespace Broker.Core.Tests.Routes;

/// <summary>
/// <c>cluster.advertise</c> and the permissions in the route INFO, our broker against nats-server 2.9.10 with the same
/// script: the INFO a member gets carries the advertised <c>host</c>, <c>port</c> and <c>ip</c> and the <c>import</c>
/// and <c>export</c> lists; the member that a new one dials forwards the new one's advertised <c>ip</c> to the others
/// (gossip, so they dial that address); clients' <c>connect_urls</c> keep the client URL.
/// </summary>
public sealed class RouteAdvertiseTests
{
    public static TheoryData<ServerKind> Kinds => new() { ServerKind.Ours, ServerKind.Reference };

    // The route port as the advertised port under another name of this host.
    private static readonly RouteSetup Advertise = new(
        port => $"  advertise: \"localhost:{port.ToString(CultureInfo.InvariantCulture)}\"\n",
        (cluster, port) => cluster.Advertise = "localhost:" + port.ToString(CultureInfo.InvariantCulture));

    private static readonly RouteSetup AdvertiseAndPermissions = new(
        port => Advertise.Conf(port) + RoutePermissionTests.Permissions.Conf(port),
        (cluster, port) =>
        {
            Advertise.Apply(cluster, port);
            RoutePermissionTests.Permissions.Apply(cluster, port);
        });

    [Theory]
    [MemberData(nameof(Kinds))]
    public async Task The_route_info_carries_the_advertised_address_and_the_permissions(ServerKind kind)
    {
        await using var node = await ClusterNode.StartAsync(kind, "A", setup: AdvertiseAndPermissions);
        await using var route = await RawClient.ConnectAsync(new IPEndPoint(IPAddress.Loopback, node.ClusterPort));
        using var info = JsonDocument.Parse(route.Info!["INFO ".Length..]);
        var root = info.RootElement;
        var port = node.ClusterPort.ToString(CultureInfo.InvariantCulture);
        Assert.Equal(("localhost", node.ClusterPort, $"nats-route://localhost:{port}/"), (root.GetProperty("host").GetString(), root.GetProperty("port").GetInt32(), root.GetProperty("ip").GetString()));
        Assert.Equal("allow=pub.> deny=pub.secret", Lists(root.GetProperty("import")));
        Assert.Equal("allow=out.> deny=out.secret", Lists(root.GetProperty("export")));
        Assert.False(root.TryGetProperty("tls_required", out _));

        // Clients are not told the route address (nats-server 2.9.10 tells a lone member's clients no URL; ours its client URL).
        await using var client = await NatsClients.ConnectAsync(node.ClientUrl, "client");
        Assert.DoesNotContain($"localhost:{port}", client.ServerInfo!.ClientConnectUrls ?? []);
    }

    [Theory]
    [MemberData(nameof(Kinds))]
    public async Task A_new_members_advertised_address_is_forwarded_to_the_others(ServerKind forwarderKind)
    {
        var advertiserKind = forwarderKind == ServerKind.Ours ? ServerKind.Reference : ServerKind.Ours;
        await using var b = await ClusterNode.StartAsync(forwarderKind, "B");
        await using var member = await RawClient.ConnectAsync(new IPEndPoint(IPAddress.Loopback, b.ClusterPort));
        await member.SendAsync(RouteWireTests.Connect + RouteWireTests.Info + "PING\r\n");
        await b.WaitForRoutesAsync(1);

        await using var a = await ClusterNode.StartAsync(advertiserKind, "A", [b.RouteUrl()], setup: Advertise);
        var expected = $"\"ip\":\"nats-route://localhost:{a.ClusterPort.ToString(CultureInfo.InvariantCulture)}/\"";
        var seen = new List<string>();
        var deadline = DateTime.UtcNow + TimeSpan.FromSeconds(10);
        while (!seen.Any(l => l.StartsWith("INFO ", StringComparison.Ordinal) && l.Contains(expected, StringComparison.Ordinal)))
        {
            var left = deadline - DateTime.UtcNow;
            var line = left > TimeSpan.Zero ? await member.TryReadLineAsync(left) : null;
            Assert.True(line is not null, $"expected an INFO with {expected}; got [{string.Join(" | ", seen)}]");
            if (line == "PING")
            {
                await member.SendAsync("PONG\r\n");
            }

            seen.Add(line!);
        }
    }

    private static string Lists(JsonElement permission) =>
        string.Join(" ", permission.EnumerateObject().Select(p => p.Name + "=" + string.Join(",", p.Value.EnumerateArray().Select(v => v.GetString()))));
}
