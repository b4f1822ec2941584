using Broker.Core.Tests.Leaf;
using NATS.Client.Core;
using NATS.Client.JetStream;
using NATS.Client.JetStream.Models;
using Broker.JetStream.Tests.Sources;
using static Broker.JetStream.Tests.Sources.SourceTestKit;

namespace Broker.JetStream.Tests.Leaf;

/// <summary>
/// JetStream across a leaf node link (nats-server's <c>jetstream { domain }</c> with a leaf remote,
/// <c>server/leafnode.go</c> <c>addLeafNodeConnection</c>): a nats-server 2.9.10 hub in domain <c>hub</c>, the spoke in
/// domain <c>edge</c>, our broker or nats-server 2.9.10 (the same scenario, the same expectations). Clients on either
/// side reach the other JetStream through its domain (NATS.Client.JetStream's <c>domain</c>) while <c>$JS.API</c>
/// stays on their own server.
/// </summary>
public sealed class JetStreamDomainLeafTests
{
    [Theory(Timeout = 120_000)]
    [MemberData(nameof(Kinds), MemberType = typeof(SourceTestKit))]
    public async Task Clients_on_either_side_use_the_other_JetStream_through_its_domain(ServerKind kind)
    {
        await using var spoke = await DomainSpoke.StartAsync(kind);
        await using var hub = spoke.ConnectHub();
        await using var edge = spoke.ConnectEdge();

        // $JS.API stays on each side's own server: each answers with its own domain.
        Assert.Equal("edge", (await RequestAsync(edge, "$JS.API.INFO", "")).GetProperty("domain").GetString());
        Assert.Equal("hub", (await RequestAsync(hub, "$JS.API.INFO", "")).GetProperty("domain").GetString());
        Assert.Equal("edge", (await RequestAsync(hub, "$JS.edge.API.INFO", "")).GetProperty("domain").GetString());
        Assert.Equal("hub", (await RequestAsync(edge, "$JS.hub.API.INFO", "")).GetProperty("domain").GetString());

        // A hub client manages, feeds and reads a stream of the edge through the domain.
        var hubToEdge = new NatsJSContext(hub, new NatsJSOpts(hub.Opts, domain: "edge"));
        await hubToEdge.CreateStreamAsync(new StreamConfig("EDGE", ["edge.>"]));
        Assert.True((await RequestAsync(edge, "$JS.API.STREAM.INFO.EDGE", "")).TryGetProperty("config", out _));
        Assert.Equal(10059, Error(await RequestAsync(hub, "$JS.API.STREAM.INFO.EDGE", "")).Item2);
        await spoke.Hub.WaitForLinksAsync(1, "edge.>");
        var ack = await hubToEdge.PublishAsync("edge.one", "from the hub");
        ack.EnsureSuccess();
        Assert.Equal(("EDGE", "edge", 1UL), (ack.Stream, ack.Domain, ack.Seq));
        await ConsumeOneAsync(hubToEdge, "EDGE", "edge.one", "from the hub");

        // An edge client does the same with a stream of the hub.
        var edgeToHub = new NatsJSContext(edge, new NatsJSOpts(edge.Opts, domain: "hub"));
        await edgeToHub.CreateStreamAsync(new StreamConfig("HUB", ["hub.>"]));
        await LeafHub.WaitForLeafzAsync(spoke.HttpPort, 1, ["hub.>"], "the spoke");
        var info = await edgeToHub.GetStreamAsync("HUB");
        Assert.Equal("HUB", info.Info.Config.Name);
        Assert.Equal(10059, Error(await RequestAsync(edge, "$JS.API.STREAM.INFO.HUB", "")).Item2);
        ack = await edgeToHub.PublishAsync("hub.one", "from the edge");
        ack.EnsureSuccess();
        Assert.Equal(("HUB", "hub", 1UL), (ack.Stream, ack.Domain, ack.Seq));
        await ConsumeOneAsync(edgeToHub, "HUB", "hub.one", "from the edge");
    }

    [Theory(Timeout = 180_000)]
    [MemberData(nameof(Kinds), MemberType = typeof(SourceTestKit))]
    public async Task Mirrors_and_sources_follow_streams_across_the_link_both_ways_and_after_a_link_restart(ServerKind kind)
    {
        await using var spoke = await DomainSpoke.StartAsync(kind);
        await using var hub = spoke.ConnectHub();
        await using var edge = spoke.ConnectEdge();

        // The origins: EDGE on the edge, HUB on the hub (file streams there, so the hub's restart keeps them).
        Assert.Equal(default, Error(await RequestAsync(edge, "$JS.API.STREAM.CREATE.EDGE", """{"name":"EDGE","subjects":["edge.>"],"storage":"memory"}""")));
        Assert.Equal(default, Error(await RequestAsync(hub, "$JS.API.STREAM.CREATE.HUB", """{"name":"HUB","subjects":["hub.>"],"storage":"file"}""")));

        // The edge follows HUB through the hub's domain, the hub follows EDGE through the edge's (the goal).
        Assert.Equal(default, Error(await RequestAsync(edge, "$JS.API.STREAM.CREATE.EM", """{"name":"EM","storage":"memory","mirror":{"name":"HUB","external":{"api":"$JS.hub.API"}}}""")));
        Assert.Equal(default, Error(await RequestAsync(edge, "$JS.API.STREAM.CREATE.ES", """{"name":"ES","storage":"memory","sources":[{"name":"HUB","external":{"api":"$JS.hub.API"}}]}""")));
        Assert.Equal(default, Error(await RequestAsync(hub, "$JS.API.STREAM.CREATE.HM", """{"name":"HM","storage":"file","mirror":{"name":"EDGE","external":{"api":"$JS.edge.API"}}}""")));
        Assert.Equal(default, Error(await RequestAsync(hub, "$JS.API.STREAM.CREATE.HS", """{"name":"HS","storage":"file","sources":[{"name":"EDGE","external":{"api":"$JS.edge.API","deliver":"from.edge"}}]}""")));
        await spoke.Hub.WaitForLinksAsync(1, "edge.>");
        await LeafHub.WaitForLeafzAsync(spoke.HttpPort, 1, ["hub.>"], "the spoke");

        await PublishAsync(edge, "edge", 1, 3);
        await PublishAsync(hub, "hub", 1, 3);
        await FollowedAsync(spoke, hub, edge, 3);

        // The link goes down with the hub and comes back; what is published on either side meanwhile and after follows.
        // (The restarted hub listens for clients on another port: a new connection.)
        await spoke.Hub.RestartAsync();
        await PublishAsync(edge, "edge", 4, 4);
        await spoke.WaitForLinkAsync("edge.>");
        await LeafHub.WaitForLeafzAsync(spoke.HttpPort, 1, ["hub.>"], "the spoke");
        await using var restarted = spoke.ConnectHub();
        await PublishAsync(edge, "edge", 5, 5);
        await PublishAsync(restarted, "hub", 4, 5);
        await FollowedAsync(spoke, restarted, edge, 5);
    }

    private static async Task PublishAsync(NatsConnection connection, string prefix, int first, int last)
    {
        var js = new NatsJSContext(connection);
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(20));
        for (var i = first; i <= last; i++)
        {
            (await js.PublishAsync($"{prefix}.{i}", $"{prefix} {i}", cancellationToken: timeout.Token)).EnsureSuccess();
        }
    }

    // Each copy holds the origin's messages, subjects and payloads as published, in order.
    private static async Task FollowedAsync(DomainSpoke spoke, NatsConnection hub, NatsConnection edge, int count)
    {
        var timeout = TimeSpan.FromSeconds(60);
        foreach (var (connection, stream, origin) in new[] { (edge, "EM", "hub"), (edge, "ES", "hub"), (hub, "HM", "edge"), (hub, "HS", "edge") })
        {
            try
            {
                await WaitForMessagesAsync(connection, stream, count, timeout);
            }
            catch (Exception ex) when (ex is not OperationCanceledException)
            {
                throw new InvalidOperationException($"{stream}: {await InfoAsync(connection, stream)}\n{spoke.Log}", ex);
            }

            var messages = await MessagesAsync(connection, stream);
            Assert.Equal(Enumerable.Range(1, count).Select(i => $"{origin}.{i} {origin} {i}"), messages.Select(m => string.Join(' ', m.Split(' ').Skip(1).Take(3))));
        }
    }

    private static async Task ConsumeOneAsync(NatsJSContext js, string stream, string subject, string data)
    {
        var consumer = await js.CreateOrUpdateConsumerAsync(stream, new ConsumerConfig("reader") { AckPolicy = ConsumerConfigAckPolicy.Explicit });
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(20));
        await foreach (var message in consumer.FetchAsync<string>(new NatsJSFetchOpts { MaxMsgs = 1, Expires = TimeSpan.FromSeconds(5) }, cancellationToken: timeout.Token))
        {
            Assert.Equal((subject, data), (message.Subject, message.Data));
            await message.AckAsync(cancellationToken: timeout.Token);
            await Eventually.AssertAsync(
                async () => (await js.GetConsumerAsync(stream, "reader", timeout.Token)).Info.NumAckPending == 0,
                "the ack to cross the link",
                TimeSpan.FromSeconds(10));
            return;
        }

        Assert.Fail($"no message fetched from {stream}");
    }
}
