using NATS.Client.Core;
using NATS.Client.JetStream;
using NATS.Client.JetStream.Models;
using Broker.JetStream.Tests.Sources;
using static Broker.JetStream.Tests.Sources.SourceTestKit;

namespace Broker.JetStream.Tests.Leaf;

/// <summary>
/// JetStream across a leaf node link (nats-server's <c>jetstream { domain }</c> with a leaf remote,
/// <c>server/leafnode.go</c> <c>addLeafNodeConnection</c>): a hub in domain <c>hub</c> and a spoke in domain
/// <c>edge</c>, each our broker or nats-server 2.9.10, in every pairing (all-nats-server the control; the same
/// scenario, the same expectations). Clients on either side reach the other JetStream through its domain
/// (NATS.Client.JetStream's <c>domain</c>) while <c>$JS.API</c> stays on their own server.
/// </summary>
public sealed class JetStreamDomainLeafTests
{
    /// <summary>(hub, spoke): the broker as the spoke, as the hub, on both sides, and neither.</summary>
    public static TheoryData<ServerKind, ServerKind> Links => new()
    {
        { ServerKind.Reference, ServerKind.Ours },
        { ServerKind.Ours, ServerKind.Reference },
        { ServerKind.Ours, ServerKind.Ours },
        { ServerKind.Reference, ServerKind.Reference },
    };

    [Theory(Timeout = 120_000)]
    [MemberData(nameof(Links))]
    public async Task Clients_on_either_side_use_the_other_JetStream_through_its_domain(ServerKind hubKind, ServerKind spokeKind)
    {
        await using var link = await DomainLink.StartAsync(hubKind, spokeKind);
        await using var hub = link.ConnectHub();
        await using var edge = link.ConnectEdge();

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
        await link.WaitForHubInterestAsync("edge.>");
        var ack = await hubToEdge.PublishAsync("edge.one", "from the hub");
        ack.EnsureSuccess();
        Assert.Equal(("EDGE", "edge", 1UL), (ack.Stream, ack.Domain, ack.Seq));
        await ConsumeOneAsync(hubToEdge, "EDGE", "edge.one", "from the hub");

        // An edge client does the same with a stream of the hub.
        var edgeToHub = new NatsJSContext(edge, new NatsJSOpts(edge.Opts, domain: "hub"));
        await edgeToHub.CreateStreamAsync(new StreamConfig("HUB", ["hub.>"]));
        await link.WaitForSpokeInterestAsync("hub.>");
        var info = await edgeToHub.GetStreamAsync("HUB");
        Assert.Equal("HUB", info.Info.Config.Name);
        Assert.Equal(10059, Error(await RequestAsync(edge, "$JS.API.STREAM.INFO.HUB", "")).Item2);
        ack = await edgeToHub.PublishAsync("hub.one", "from the edge");
        ack.EnsureSuccess();
        Assert.Equal(("HUB", "hub", 1UL), (ack.Stream, ack.Domain, ack.Seq));
        await ConsumeOneAsync(edgeToHub, "HUB", "hub.one", "from the edge");
    }

    [Theory(Timeout = 240_000)]
    [MemberData(nameof(Links))]
    public async Task Mirrors_and_sources_follow_streams_across_the_link_both_ways_and_after_hub_and_spoke_restarts(ServerKind hubKind, ServerKind spokeKind)
    {
        await using var link = await DomainLink.StartAsync(hubKind, spokeKind);
        var hub = link.ConnectHub();
        var edge = link.ConnectEdge();
        try
        {
            // The origins: EDGE on the edge, HUB on the hub (file streams, so restarts keep them).
            Assert.Equal(default, Error(await RequestAsync(edge, "$JS.API.STREAM.CREATE.EDGE", """{"name":"EDGE","subjects":["edge.>"],"storage":"file"}""")));
            Assert.Equal(default, Error(await RequestAsync(hub, "$JS.API.STREAM.CREATE.HUB", """{"name":"HUB","subjects":["hub.>"],"storage":"file"}""")));

            // The edge follows HUB through the hub's domain, the hub follows EDGE through the edge's (the issue's goal),
            // each once without and once with a deliver prefix.
            Assert.Equal(default, Error(await RequestAsync(edge, "$JS.API.STREAM.CREATE.EM", """{"name":"EM","storage":"file","mirror":{"name":"HUB","external":{"api":"$JS.hub.API"}}}""")));
            Assert.Equal(default, Error(await RequestAsync(edge, "$JS.API.STREAM.CREATE.ES", """{"name":"ES","storage":"file","sources":[{"name":"HUB","external":{"api":"$JS.hub.API","deliver":"from.hub"}}]}""")));
            Assert.Equal(default, Error(await RequestAsync(hub, "$JS.API.STREAM.CREATE.HM", """{"name":"HM","storage":"file","mirror":{"name":"EDGE","external":{"api":"$JS.edge.API"}}}""")));
            Assert.Equal(default, Error(await RequestAsync(hub, "$JS.API.STREAM.CREATE.HS", """{"name":"HS","storage":"file","sources":[{"name":"EDGE","external":{"api":"$JS.edge.API","deliver":"from.edge"}}]}""")));
            await link.WaitForLinkAsync(["edge.>"], ["hub.>"]);

            await PublishAsync(edge, "edge", 1, 3);
            await PublishAsync(hub, "hub", 1, 3);
            await FollowedAsync(link, hub, edge, 3);

            // The link goes down with the hub, then with the spoke, and comes back: what the side that stayed up publishes
            // meanwhile and what both publish after follows (the copies ask the restarted side again, or resume from where
            // they stopped).
            var published = 3;
            foreach (var hubRestarts in new[] { true, false })
            {
                await (hubRestarts ? hub : edge).DisposeAsync();
                await (hubRestarts ? link.RestartHubAsync() : link.RestartSpokeAsync());
                var (stayed, stayedPrefix, restartedPrefix) = hubRestarts ? (edge, "edge", "hub") : (hub, "hub", "edge");
                await PublishAsync(stayed, stayedPrefix, published + 1, published + 1);
                await link.WaitForLinkAsync(["edge.>"], ["hub.>"]);
                var restarted = hubRestarts ? hub = link.ConnectHub() : edge = link.ConnectEdge();
                await PublishAsync(restarted, restartedPrefix, published + 1, published + 2);
                await PublishAsync(stayed, stayedPrefix, published + 2, published + 2);
                published += 2;
                await FollowedAsync(link, hub, edge, published);
            }
        }
        finally
        {
            await hub.DisposeAsync();
            await edge.DisposeAsync();
        }
    }

    // addLeafNodeConnection maps the hub's domain for the account the leaf user binds: the spoke reaches that account's
    // JetStream (not $G's), and that account's clients reach the spoke's.
    [Theory(Timeout = 120_000)]
    [MemberData(nameof(Links))]
    public async Task A_spoke_bound_to_an_account_of_the_hub_reaches_that_accounts_JetStream(ServerKind hubKind, ServerKind spokeKind)
    {
        await using var link = await DomainLink.StartAsync(hubKind, spokeKind, accountHub: true);
        await using var hub = link.ConnectHub();
        await using var edge = link.ConnectEdge();
        Assert.Equal("hub", (await RequestAsync(edge, "$JS.hub.API.INFO", "")).GetProperty("domain").GetString());
        Assert.Equal("edge", (await RequestAsync(hub, "$JS.edge.API.INFO", "")).GetProperty("domain").GetString());
        Assert.Equal(default, Error(await RequestAsync(edge, "$JS.hub.API.STREAM.CREATE.HUB", """{"name":"HUB","subjects":["hub.>"],"storage":"memory"}""")));
        Assert.True((await InfoAsync(hub, "HUB")).TryGetProperty("config", out _), "the stream is in the hub's account");
        Assert.Equal(default, Error(await RequestAsync(edge, "$JS.API.STREAM.CREATE.EM", """{"name":"EM","storage":"memory","mirror":{"name":"HUB","external":{"api":"$JS.hub.API"}}}""")));
        await PublishAsync(hub, "hub", 1, 3);
        try
        {
            await WaitForMessagesAsync(edge, "EM", 3, TimeSpan.FromSeconds(30));
        }
        catch (Exception ex) when (ex is not OperationCanceledException)
        {
            throw new InvalidOperationException($"EM: {await InfoAsync(edge, "EM")}\n{link.Log}", ex);
        }
    }

    // A mirror's consumer sends flow-control requests once 1 MB is in flight (nats-server's window: 32 MB / 16, asked at
    // half) and stops at 2 MB until the copy answers: 3 MB each way land only if the answers cross the link back.
    [Theory(Timeout = 180_000)]
    [MemberData(nameof(Links))]
    public async Task Mirrors_larger_than_the_flow_control_window_land_both_ways(ServerKind hubKind, ServerKind spokeKind)
    {
        const int count = 300;
        await using var link = await DomainLink.StartAsync(hubKind, spokeKind);
        await using var hub = link.ConnectHub();
        await using var edge = link.ConnectEdge();
        Assert.Equal(default, Error(await RequestAsync(edge, "$JS.API.STREAM.CREATE.EDGE", """{"name":"EDGE","subjects":["edge.>"],"storage":"memory"}""")));
        Assert.Equal(default, Error(await RequestAsync(hub, "$JS.API.STREAM.CREATE.HUB", """{"name":"HUB","subjects":["hub.>"],"storage":"memory"}""")));
        var payload = new byte[10_000];
        Random.Shared.NextBytes(payload);
        foreach (var (connection, prefix) in new[] { (edge, "edge"), (hub, "hub") })
        {
            var js = new NatsJSContext(connection);
            for (var i = 0; i < count; i++)
            {
                (await js.PublishAsync($"{prefix}.{i}", payload)).EnsureSuccess();
            }
        }

        Assert.Equal(default, Error(await RequestAsync(edge, "$JS.API.STREAM.CREATE.EM", """{"name":"EM","storage":"memory","mirror":{"name":"HUB","external":{"api":"$JS.hub.API"}}}""")));
        Assert.Equal(default, Error(await RequestAsync(hub, "$JS.API.STREAM.CREATE.HM", """{"name":"HM","storage":"memory","mirror":{"name":"EDGE","external":{"api":"$JS.edge.API"}}}""")));
        foreach (var (connection, stream) in new[] { (edge, "EM"), (hub, "HM") })
        {
            try
            {
                await WaitForMessagesAsync(connection, stream, count, TimeSpan.FromSeconds(60));
            }
            catch (Exception ex) when (ex is not OperationCanceledException)
            {
                throw new InvalidOperationException($"{stream}: {await InfoAsync(connection, stream)}\n{link.Log}", ex);
            }

            var last = await RequestAsync(connection, $"$JS.API.STREAM.MSG.GET.{stream}", $"{{\"seq\":{count}}}");
            Assert.Equal(payload, Convert.FromBase64String(last.GetProperty("message").GetProperty("data").GetString()!));
        }
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
    private static async Task FollowedAsync(DomainLink link, NatsConnection hub, NatsConnection edge, int count)
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
                throw new InvalidOperationException($"{stream}: {await InfoAsync(connection, stream)}\n{link.Log}", ex);
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
