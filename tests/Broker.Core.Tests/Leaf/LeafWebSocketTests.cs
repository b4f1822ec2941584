using Broker.TestKit;
using NATS.Client.Core;
using Xunit;

namespace Broker.Core.Tests.Leaf;

/// <summary>
/// Leaf node remotes over WebSocket to a nats-server 2.9.10 hub's <c>websocket</c> port (with <c>leafnodes { }</c>, which
/// the hub needs to take leaf nodes there), each scenario run with nats-server as the spoke too: <c>ws://</c> with
/// <c>no_tls</c>, <c>wss://</c> with the test CA, the link back after the hub restarts. Waits poll /leafz.
/// </summary>
public sealed class LeafWebSocketTests
{
    private static readonly TestCertificates Certificates = TestCertificates.Shared;

    public static TheoryData<ServerKind> Kinds => new() { ServerKind.Ours, ServerKind.Reference };

    [Theory]
    [MemberData(nameof(Kinds))]
    public async Task Messages_cross_a_ws_link_both_ways(ServerKind kind)
    {
        await using var hub = await LeafHub.StartAsync(websocket: "  no_tls: true");
        await using var spoke = await LeafSpoke.StartAsync(kind, new SpokeRemote(hub.WebSocketUrl()));

        await LeafTraffic.CrossesBothWaysAsync(hub, spoke);
    }

    [Theory]
    [MemberData(nameof(Kinds))]
    public async Task Messages_cross_a_wss_link_both_ways(ServerKind kind)
    {
        await using var hub = await LeafHub.StartAsync(
            websocket: $"  tls {{ cert_file: \"{Certificates.ServerCertFile}\", key_file: \"{Certificates.ServerKeyFile}\" }}");
        await using var spoke = await LeafSpoke.StartAsync(kind, new SpokeRemote(hub.WebSocketUrl("wss")) { Tls = new LeafRemoteTlsOptions { CaFile = Certificates.CaFile } });

        await LeafTraffic.CrossesBothWaysAsync(hub, spoke);
    }

    [Theory]
    [MemberData(nameof(Kinds))]
    public async Task A_wss_hub_the_spoke_cannot_trust_is_refused_with_a_clear_log_line(ServerKind kind)
    {
        await using var hub = await LeafHub.StartAsync(
            websocket: $"  tls {{ cert_file: \"{Certificates.ServerCertFile}\", key_file: \"{Certificates.ServerKeyFile}\" }}");
        await using var spoke = await LeafSpoke.StartAsync(kind, new SpokeRemote(hub.WebSocketUrl("wss")));

        await LeafTlsTests.WaitForLogAsync(spoke, "certificate signed by unknown authority", times: 2);
        Assert.Equal(0, (await hub.LeafzAsync()).GetProperty("leafnodes").GetInt32());
    }

    [Theory]
    [MemberData(nameof(Kinds))]
    public async Task The_ws_link_comes_back_after_the_hub_restarts(ServerKind kind)
    {
        await using var hub = await LeafHub.StartAsync(websocket: "  no_tls: true");
        await using var spoke = await LeafSpoke.StartAsync(kind, new SpokeRemote(hub.WebSocketUrl()));

        await LeafTraffic.ComesBackAfterTheHubRestartsAsync(hub, spoke);
    }

    /// <summary>
    /// <c>ws_compression</c> with a hub whose websocket port compresses: permessage-deflate without context takeover, as
    /// the hub logs it (debug); messages above the hub's 64-byte threshold arrive compressed and are inflated.
    /// </summary>
    [Theory]
    [MemberData(nameof(Kinds))]
    public async Task Compression_is_used_when_asked_for_and_the_hub_agrees(ServerKind kind)
    {
        await using var hub = await LeafHub.StartAsync(extra: "debug: true", websocket: "  no_tls: true\n  compression: true");
        await using var spoke = await LeafSpoke.StartAsync(kind, new SpokeRemote(hub.WebSocketUrl()) { WebSocketCompression = true });
        await using var onHub = await NatsClients.ConnectAsync(hub.ClientUrl, "hub");
        await using var onSpoke = await NatsClients.ConnectAsync(spoke.ClientUrl, "spoke");
        await using var down = await onSpoke.SubscribeCoreAsync<string>("big.down");
        await using var up = await onHub.SubscribeCoreAsync<string>("big.up");
        await onSpoke.PingAsync();
        await onHub.PingAsync();
        await hub.WaitForLinksAsync(1, "big.down");
        await spoke.WaitForLinksAsync(1, "big.up");
        Assert.Contains("Leafnode compression=true", hub.Log, StringComparison.Ordinal);

        var text = string.Concat(Enumerable.Range(0, 200).Select(i => "compressible " + i + " "));
        await onHub.PublishAsync("big.down", text);
        Assert.Equal(text, (await down.NextAsync()).Data);
        await onSpoke.PublishAsync("big.up", text);
        Assert.Equal(text, (await up.NextAsync()).Data);
    }

    /// <summary>
    /// Two clustered hubs: the spoke knows only the first's websocket URL, learns the second's from
    /// <c>ws_connect_urls</c> (not its leaf port: a WebSocket remote stays on WebSocket), and moves there when the
    /// first stops.
    /// </summary>
    [Theory]
    [MemberData(nameof(Kinds))]
    public async Task A_ws_spoke_fails_over_to_the_websocket_url_another_hub_announces(ServerKind kind)
    {
        var (routeA, routeB) = (Ports.GetFreePort(), Ports.GetFreePort());
        static string Cluster(int listen, int other) => $"cluster {{ name: C, listen: \"127.0.0.1:{listen}\", routes: [\"nats://127.0.0.1:{other}\"] }}";
        var hubA = await LeafHub.StartAsync(extra: Cluster(routeA, routeB), websocket: "  no_tls: true");
        await using var hubB = await LeafHub.StartAsync(extra: Cluster(routeB, routeA), websocket: "  no_tls: true");
        await Eventually.AssertAsync(
            async () => (await LeafHub.GetAsync(hubA.HttpPort, "/routez")).GetProperty("num_routes").GetInt32() == 1,
            "the hubs to form a cluster",
            TimeSpan.FromSeconds(15));
        await using var spoke = await LeafSpoke.StartAsync(kind, new SpokeRemote(hubA.WebSocketUrl()));
        await hubA.WaitForLinksAsync(1);

        await hubA.DisposeAsync();

        await hubB.WaitForLinksAsync(1);
        await LeafTraffic.InterestReachesTheHubAsync(hubB, spoke, "after.failover");

        // nats-server names a leaf node that came through its websocket port "lid_ws" (a plain one "lid").
        Assert.Contains("- lid_ws:", hubB.Log, StringComparison.Ordinal);
        Assert.DoesNotContain("- lid:", hubB.Log, StringComparison.Ordinal);
    }

    /// <summary>A websocket port without <c>leafnodes { }</c> on the hub: nats-server closes the upgraded connection, and the spoke keeps trying.</summary>
    [Fact]
    public async Task A_hub_that_takes_no_leaf_nodes_on_its_websocket_port_gets_no_link()
    {
        var port = Ports.GetFreePort();
        await using var hub = await ReferenceServer.StartAsync($"websocket {{\n  listen: \"127.0.0.1:{port}\"\n  no_tls: true\n}}\n");
        await using var spoke = await LeafSpoke.StartAsync(ServerKind.Ours, new SpokeRemote($"ws://127.0.0.1:{port}"));

        Assert.True(
            await Eventually.TrueAsync(() => hub.Log.Split("Not configured to accept leaf node connections").Length > 2, TimeSpan.FromSeconds(15)),
            hub.Log);
        await spoke.WaitForLinksAsync(0);
    }
}
