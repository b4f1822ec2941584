using Broker.Core.Tests.Leaf;
using NATS.Client.Core;
using NATS.Client.JetStream;
using NATS.Client.JetStream.Models;
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
    public static TheoryData<ServerKind> Kinds => new() { ServerKind.Ours, ServerKind.Reference };

    [Theory(Timeout = 120_000)]
    [MemberData(nameof(Kinds))]
    public async Task Clients_on_either_side_use_the_other_JetStream_through_its_domain(ServerKind kind)
    {
        await using var spoke = await DomainSpoke.StartAsync(kind);
        await using var hub = spoke.ConnectHub();
        await using var edge = spoke.ConnectEdge();
        await spoke.WaitForLinkAsync();

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
