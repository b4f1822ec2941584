using Broker.TestKit;
using NATS.Client.Core;
using Xunit;

namespace Broker.Core.Tests.Leaf;

/// <summary>
/// The broker as a leaf node spoke of a real nats-server 2.9.10 hub, each scenario run with nats-server as the spoke
/// too: messages both ways (headers, request/reply), queue groups across the link, interest restored after the hub
/// restarts, deny_imports/deny_exports. Every wait polls /leafz (the hub's or the spoke's) or a subscription.
/// </summary>
public sealed class LeafSpokeTests
{
    public static TheoryData<ServerKind> Kinds => new() { ServerKind.Ours, ServerKind.Reference };

    [Theory]
    [MemberData(nameof(Kinds))]
    public async Task Messages_cross_the_link_both_ways_with_headers_and_replies(ServerKind kind)
    {
        await using var hub = await LeafHub.StartAsync();
        await using var spoke = await LeafSpoke.StartAsync(kind, new SpokeRemote(hub.LeafUrl()));
        await using var onHub = await NatsClients.ConnectAsync(hub.ClientUrl, "hub");
        await using var onSpoke = await NatsClients.ConnectAsync(spoke.ClientUrl, "spoke");
        await using var spokeSub = await onSpoke.SubscribeCoreAsync<string>("to.spoke");
        await using var hubSub = await onHub.SubscribeCoreAsync<string>("to.hub.>");
        await using var service = await onSpoke.SubscribeCoreAsync<string>("service");
        await onSpoke.PingAsync();
        await onHub.PingAsync();
        await hub.WaitForLinksAsync(1, "to.spoke", "service");
        await spoke.WaitForLinksAsync(1, "to.hub.>");

        // Monitoring as nats-server shows a solicited link: the hub's address and leaf port, the remote in /varz.
        var link = (await LeafHub.GetAsync(spoke.HttpPort, "/leafz")).GetProperty("leafs")[0];
        Assert.Equal(("$G", "127.0.0.1", hub.LeafPort), (link.GetProperty("account").GetString(), link.GetProperty("ip").GetString(), link.GetProperty("port").GetInt32()));
        Assert.False(link.TryGetProperty("subscriptions_list", out _));
        var varz = await LeafHub.GetAsync(spoke.HttpPort, "/varz");
        Assert.Equal(1, varz.GetProperty("leafnodes").GetInt32());
        var remote = varz.GetProperty("leaf").GetProperty("remotes")[0];
        Assert.Equal("$G", remote.GetProperty("local_account").GetString());
        Assert.Equal($"127.0.0.1:{hub.LeafPort}", remote.GetProperty("urls")[0].GetString());

        // A request from the hub to a service on the spoke.
        await LeafScenarios.MessagesCrossBothWaysAsync(onHub, onSpoke, spokeSub, hubSub, onHub, service);
    }

    [Theory]
    [MemberData(nameof(Kinds))]
    public async Task A_queue_group_across_the_link_gets_each_message_once(ServerKind kind)
    {
        await using var hub = await LeafHub.StartAsync();
        await using var spoke = await LeafSpoke.StartAsync(kind, new SpokeRemote(hub.LeafUrl()));
        await using var onHub = await NatsClients.ConnectAsync(hub.ClientUrl, "hub");
        await using var onSpoke = await NatsClients.ConnectAsync(spoke.ClientUrl, "spoke");
        await LeafScenarios.QueueGroupGetsEachMessageOnceAsync(onHub, onSpoke, s => hub.WaitForLinksAsync(1, s), s => spoke.WaitForLinksAsync(1, s));
    }

    [Theory]
    [MemberData(nameof(Kinds))]
    public async Task Interest_is_sent_again_after_the_hub_restarts(ServerKind kind)
    {
        await using var hub = await LeafHub.StartAsync();
        await using var spoke = await LeafSpoke.StartAsync(kind, new SpokeRemote(hub.LeafUrl()));

        // The spoke serves its own clients while the link is down.
        await LeafTraffic.ComesBackAfterTheHubRestartsAsync(hub, spoke, async onSpoke =>
        {
            await using var local = await onSpoke.SubscribeCoreAsync<string>("local");
            await onSpoke.PublishAsync("local", "still here");
            Assert.Equal("still here", (await local.NextAsync()).Data);
        });
    }

    [Theory]
    [MemberData(nameof(Kinds))]
    public async Task Deny_imports_and_exports_keep_subjects_off_the_link(ServerKind kind)
    {
        await using var hub = await LeafHub.StartAsync();
        await using var spoke = await LeafSpoke.StartAsync(kind, new SpokeRemote(hub.LeafUrl()) { DenyImports = ["in.denied"], DenyExports = ["out.denied"] });
        await using var onHub = await NatsClients.ConnectAsync(hub.ClientUrl, "hub");
        await using var onSpoke = await NatsClients.ConnectAsync(spoke.ClientUrl, "spoke");
        await using var inDenied = await onSpoke.SubscribeCoreAsync<string>("in.denied");
        await using var inAllowed = await onSpoke.SubscribeCoreAsync<string>("in.allowed");
        await using var outDenied = await onHub.SubscribeCoreAsync<string>("out.denied");
        await using var outAllowed = await onHub.SubscribeCoreAsync<string>("out.allowed");
        await onSpoke.PingAsync();
        await onHub.PingAsync();
        await hub.WaitForLinksAsync(1, "in.allowed");
        await spoke.WaitForLinksAsync(1, "out.allowed");

        var hubLeafz = await hub.LeafzAsync();
        Assert.DoesNotContain("in.denied", hubLeafz.GetProperty("leafs")[0].GetProperty("subscriptions_list").EnumerateArray().Select(s => s.GetString()));

        // In order on each link: when the allowed message arrives, a denied one sent before it would have too.
        await onHub.PublishAsync("in.denied", "no");
        await onHub.PublishAsync("in.allowed", "yes");
        Assert.Equal("yes", (await inAllowed.NextAsync()).Data);
        await onSpoke.PublishAsync("out.denied", "no");
        await onSpoke.PublishAsync("out.allowed", "yes");
        Assert.Equal("yes", (await outAllowed.NextAsync()).Data);
        await onSpoke.PingAsync();
        await onHub.PingAsync();
        Assert.True(inDenied.IsEmpty());
        Assert.True(outDenied.IsEmpty());
    }

    [Theory]
    [MemberData(nameof(Kinds))]
    public async Task A_user_and_password_in_the_url_authenticate_the_link(ServerKind kind)
    {
        await using var hub = await LeafHub.StartAsync("  authorization { user: leaf, password: s3cret }");
        await using var spoke = await LeafSpoke.StartAsync(kind, new SpokeRemote(hub.LeafUrl("leaf:s3cret")));
        await using var onSpoke = await NatsClients.ConnectAsync(spoke.ClientUrl, "spoke");
        await using var sub = await onSpoke.SubscribeCoreAsync<string>("authed");
        await onSpoke.PingAsync();
        await hub.WaitForLinksAsync(1, "authed");
        await using var onHub = await NatsClients.ConnectAsync(hub.ClientUrl, "hub");
        await onHub.PublishAsync("authed", "in");
        Assert.Equal("in", (await sub.NextAsync()).Data);
    }

    [Theory]
    [MemberData(nameof(Kinds))]
    public async Task A_wrong_password_gets_no_link(ServerKind kind)
    {
        await using var hub = await LeafHub.StartAsync("  authorization { user: leaf, password: s3cret }");
        await using var spoke = await LeafSpoke.StartAsync(kind, new SpokeRemote(hub.LeafUrl("leaf:wrong")));
        Assert.True(
            await Eventually.TrueAsync(() => hub.Log.Contains("Leafnode connection closed: Authentication Failure", StringComparison.Ordinal), TimeSpan.FromSeconds(10)),
            hub.Log);
        Assert.True(await Eventually.TrueAsync(() => spoke.Log.Contains("'Authorization Violation'", StringComparison.Ordinal), TimeSpan.FromSeconds(10)), spoke.Log);
        var leafz = await hub.LeafzAsync();
        Assert.Equal(0, leafz.GetProperty("leafnodes").GetInt32());
    }

    /// <summary>
    /// nats-server's TestLeafNodeLoop shape: the spoke reaches hub B directly and through hub A (a spoke of B), so its
    /// loop detection subject comes back on the other link; the spoke refuses it with nats-server's text, which the hub
    /// it tells logs too. (Two remotes to the same hub are not a loop for 2.9.10: the hub replaces the older link.)
    /// </summary>
    [Theory]
    [MemberData(nameof(Kinds))]
    public async Task A_loop_through_two_hubs_is_detected_and_refused(ServerKind kind)
    {
        await using var top = await LeafHub.StartAsync();
        await using var middle = await LeafHub.StartAsync($"  remotes: [ {{ url: \"{top.LeafUrl()}\" }} ]");
        await top.WaitForLinksAsync(1);
        await using var spoke = await LeafSpoke.StartAsync(kind, new SpokeRemote(middle.LeafUrl()), new SpokeRemote(top.LeafUrl()));
        const string Text = "Loop detected for leafnode account=\"$G\". Delaying attempt to reconnect for 30s";
        Assert.True(await Eventually.TrueAsync(() => spoke.Log.Contains(Text, StringComparison.Ordinal), TimeSpan.FromSeconds(10)), spoke.Log);
        Assert.True(
            await Eventually.TrueAsync(() => top.Log.Contains(Text, StringComparison.Ordinal) || middle.Log.Contains(Text, StringComparison.Ordinal), TimeSpan.FromSeconds(10)),
            top.Log + middle.Log);
    }
    /// <summary>
    /// What a spoke tells a hub about a fresh account (the system imports of <c>$G</c>, a client's subscriptions, a
    /// queue group) is the same for both spokes, apart from the loop detection subject's random part.
    /// </summary>
    [Fact]
    public async Task The_hub_sees_the_same_interest_from_both_spokes()
    {
        await using var hub = await LeafHub.StartAsync();
        var seen = new List<string>();
        foreach (var kind in new[] { ServerKind.Reference, ServerKind.Ours })
        {
            await using var spoke = await LeafSpoke.StartAsync(kind, new SpokeRemote(hub.LeafUrl()));
            await using var client = await NatsClients.ConnectAsync(spoke.ClientUrl, "spoke");
            await using var plain = await client.SubscribeCoreAsync<string>("orders.>");
            await using var member1 = await client.SubscribeCoreAsync<string>("jobs", queueGroup: "q");
            await using var member2 = await client.SubscribeCoreAsync<string>("jobs", queueGroup: "q");
            await client.PingAsync();
            await hub.WaitForLinksAsync(1, "orders.>", "jobs");
            var leafz = await hub.LeafzAsync();
            var subjects = leafz.GetProperty("leafs")[0].GetProperty("subscriptions_list").EnumerateArray()
                .Select(s => s.GetString()!)
                .Select(s => s.StartsWith("$LDS.", StringComparison.Ordinal) ? "$LDS." : s)

                // Ours has an in-process client in $G waiting for replies (nats-server's internal clients are in $SYS).
                .Where(s => !s.StartsWith("_INBOX.", StringComparison.Ordinal))
                .Order(StringComparer.Ordinal);
            seen.Add(kind + ": " + string.Join(" ", subjects));
            await spoke.DisposeAsync();
            await hub.WaitForLinksAsync(0);
        }

        Assert.Equal(seen[0][(seen[0].IndexOf(':', StringComparison.Ordinal) + 1)..], seen[1][(seen[1].IndexOf(':', StringComparison.Ordinal) + 1)..]);
    }
}
