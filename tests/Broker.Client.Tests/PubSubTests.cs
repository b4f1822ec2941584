using System.Collections.Concurrent;
using System.Text;

namespace Broker.Client.Tests;

/// <summary>
/// Core messaging through the legacy .NET client, each case against our broker and the reference nats-server:
/// publish/subscribe, wildcards, queue groups, request/reply, auto-unsubscribe, flush and server PINGs.
/// </summary>
public sealed class PubSubTests
{
    private const int Wait = NatsClientConnection.DefaultTimeoutMilliseconds;

    public static TheoryData<ServerKind> Servers => new() { ServerKind.Ours, ServerKind.Reference };

    [Theory(Timeout = 60_000)]
    [MemberData(nameof(Servers))]
    public async Task Messages_between_two_connections_arrive_in_order_and_intact(ServerKind kind)
    {
        await using var server = await ServerUnderTest.StartAsync(kind);
        using var subscriber = NatsClientConnection.Connect(server.Url, name: "subscriber");
        using var publisher = NatsClientConnection.Connect(server.Url, name: "publisher");
        using var sub = subscriber.Connection.SubscribeSync("orders.created");
        subscriber.Connection.Flush(Wait);

        var binary = Enumerable.Range(0, 256).Select(i => (byte)i).ToArray();
        var payloads = Enumerable.Range(0, 50).Select(i => Encoding.UTF8.GetBytes($"order-{i}")).Append([]).Append(binary).ToList();
        foreach (var payload in payloads)
        {
            publisher.Connection.Publish("orders.created", payload);
        }

        publisher.Connection.Publish("orders.created", "reply.here", [1, 2, 3]);
        publisher.Connection.Flush(Wait);

        foreach (var payload in payloads)
        {
            var message = sub.NextMessage(Wait);
            Assert.Equal("orders.created", message.Subject);
            Assert.Equal(payload, message.Data ?? []);
        }

        var withReply = sub.NextMessage(Wait);
        Assert.Equal("reply.here", withReply.Reply);
        Assert.Equal([1, 2, 3], withReply.Data);
    }

    [Theory(Timeout = 60_000)]
    [MemberData(nameof(Servers))]
    public async Task Wildcard_subscriptions_match_one_token_or_the_tail(ServerKind kind)
    {
        await using var server = await ServerUnderTest.StartAsync(kind);
        using var client = NatsClientConnection.Connect(server.Url);
        var connection = client.Connection;
        var received = new ConcurrentDictionary<string, ConcurrentQueue<string>>();
        string[] patterns = ["sensor.*", "sensor.>", "sensor.*.temp", "*.kitchen.>"];
        var subscriptions = patterns.Select(pattern => connection.SubscribeAsync(pattern, (_, e) =>
            received.GetOrAdd(pattern, _ => new ConcurrentQueue<string>()).Enqueue(e.Message.Subject))).ToList();
        using var done = connection.SubscribeSync("done");
        connection.Flush(Wait);

        foreach (var subject in new[] { "sensor", "sensor.kitchen", "sensor.kitchen.temp", "sensor.kitchen.temp.max", "house.kitchen.light", "sensor.hall.temp" })
        {
            connection.Publish(subject, []);
        }

        // The async handlers run on the client's delivery threads: the last message marks the end of the batch,
        // and the handlers have seen the others once each of their queues holds what was routed before it.
        connection.Publish("done", []);
        done.NextMessage(Wait);
        connection.Flush(Wait);
        await Eventually.TrueAsync(() => received.Values.Sum(q => q.Count) >= 10);

        Assert.Equal(["sensor.kitchen"], Received("sensor.*"));
        Assert.Equal(["sensor.kitchen", "sensor.kitchen.temp", "sensor.kitchen.temp.max", "sensor.hall.temp"], Received("sensor.>"));
        Assert.Equal(["sensor.kitchen.temp", "sensor.hall.temp"], Received("sensor.*.temp"));
        Assert.Equal(["sensor.kitchen.temp", "sensor.kitchen.temp.max", "house.kitchen.light"], Received("*.kitchen.>"));
        subscriptions.ForEach(s => s.Dispose());

        List<string> Received(string pattern) => [.. received.GetValueOrDefault(pattern) ?? []];
    }

    [Theory(Timeout = 60_000)]
    [MemberData(nameof(Servers))]
    public async Task Queue_group_of_three_gets_each_message_exactly_once_and_every_member_some(ServerKind kind)
    {
        const int total = 300;
        await using var server = await ServerUnderTest.StartAsync(kind);
        var members = Enumerable.Range(0, 3).Select(i => NatsClientConnection.Connect(server.Url, name: $"worker-{i}")).ToList();
        var got = members.Select(_ => new ConcurrentQueue<int>()).ToList();
        for (var i = 0; i < members.Count; i++)
        {
            var queue = got[i];
            members[i].Connection.SubscribeAsync("jobs", "workers", (_, e) => queue.Enqueue(int.Parse(Encoding.ASCII.GetString(e.Message.Data), System.Globalization.CultureInfo.InvariantCulture)));
            members[i].Connection.Flush(Wait);
        }

        using var publisher = NatsClientConnection.Connect(server.Url, name: "publisher");
        for (var i = 0; i < total; i++)
        {
            publisher.Connection.Publish("jobs", Encoding.ASCII.GetBytes(i.ToString(System.Globalization.CultureInfo.InvariantCulture)));
        }

        publisher.Connection.Flush(Wait);
        await Eventually.TrueAsync(() => got.Sum(q => q.Count) >= total);

        // A duplicate would arrive before the PONG of a flush on the member's own connection.
        members.ForEach(m => m.Connection.Flush(Wait));
        var all = got.SelectMany(q => q).Order().ToList();
        Assert.Equal(Enumerable.Range(0, total), all);
        Assert.All(got, q => Assert.NotEmpty(q));
        members.ForEach(m => m.Dispose());
    }

    [Theory(Timeout = 60_000)]
    [MemberData(nameof(Servers))]
    public async Task Request_reply_through_the_client_request_api(ServerKind kind)
    {
        await using var server = await ServerUnderTest.StartAsync(kind);
        using var responder = NatsClientConnection.Connect(server.Url, name: "responder");
        using var service = responder.Connection.SubscribeAsync("svc.upper", (_, e) =>
            responder.Connection.Publish(e.Message.Reply, Encoding.UTF8.GetBytes(Encoding.UTF8.GetString(e.Message.Data).ToUpperInvariant())));
        responder.Connection.Flush(Wait);

        using var requester = NatsClientConnection.Connect(server.Url, name: "requester");
        var reply = requester.Connection.Request("svc.upper", "hello"u8.ToArray(), Wait);
        Assert.Equal("HELLO", Encoding.UTF8.GetString(reply.Data));

        var replies = await Task.WhenAll(Enumerable.Range(0, 20).Select(i =>
            requester.Connection.RequestAsync("svc.upper", Encoding.UTF8.GetBytes($"req-{i}"), Wait)));
        Assert.Equal(Enumerable.Range(0, 20).Select(i => $"REQ-{i}"), replies.Select(r => Encoding.UTF8.GetString(r.Data)));

        // The old request style: a fresh inbox per request, subscribed with UNSUB max 1.
        using var oldStyle = NatsClientConnection.Connect(server.Url, o => o.UseOldRequestStyle = true, "old-style");
        Assert.Equal("OLD", Encoding.UTF8.GetString(oldStyle.Connection.Request("svc.upper", "old"u8.ToArray(), Wait).Data));
    }

    [Theory(Timeout = 60_000)]
    [MemberData(nameof(Servers))]
    public async Task Request_without_responders_times_out_for_a_client_without_no_responders_support(ServerKind kind)
    {
        // This client sends neither headers nor no_responders in CONNECT, so no 503 comes back; it just waits.
        await using var server = await ServerUnderTest.StartAsync(kind);
        using var client = NatsClientConnection.Connect(server.Url);
        await Assert.ThrowsAsync<NATSTimeoutException>(() => client.Connection.RequestAsync("nobody.home", [], 300));
        Assert.Equal(ConnState.CONNECTED, client.Connection.State);
    }

    [Theory(Timeout = 60_000)]
    [MemberData(nameof(Servers))]
    public async Task AutoUnsubscribe_makes_the_server_stop_after_max_messages(ServerKind kind)
    {
        await using var server = await ServerUnderTest.StartAsync(kind);
        using var client = NatsClientConnection.Connect(server.Url);
        var connection = client.Connection;
        using var limited = connection.SubscribeSync("ticks");
        limited.AutoUnsubscribe(3);
        using var marker = connection.SubscribeSync("marker");
        connection.Flush(Wait);

        for (var i = 0; i < 10; i++)
        {
            connection.Publish("ticks", [(byte)i]);
        }

        connection.Publish("marker", []);
        connection.Flush(Wait);
        marker.NextMessage(Wait);

        for (var i = 0; i < 3; i++)
        {
            Assert.Equal([(byte)i], limited.NextMessage(Wait).Data);
        }

        Assert.ThrowsAny<NATSException>(() => limited.NextMessage(200));

        // The client counts every MSG the server sent: 3 ticks and the marker, not the 7 ticks past the limit.
        Assert.Equal(4, connection.Stats.InMsgs);
    }

    [Theory(Timeout = 60_000)]
    [MemberData(nameof(Servers))]
    public async Task Verbose_and_pedantic_connection_absorbs_the_acknowledgements(ServerKind kind)
    {
        await using var server = await ServerUnderTest.StartAsync(kind);
        using var client = NatsClientConnection.Connect(server.Url, o => (o.Verbose, o.Pedantic) = (true, true));
        using var sub = client.Connection.SubscribeSync("chatty");
        for (var i = 0; i < 5; i++)
        {
            client.Connection.Publish("chatty", [(byte)i]);
        }

        client.Connection.Flush(Wait);
        for (var i = 0; i < 5; i++)
        {
            Assert.Equal([(byte)i], sub.NextMessage(Wait).Data);
        }

        Assert.Equal(ConnState.CONNECTED, client.Connection.State);
    }

    [Theory(Timeout = 60_000)]
    [MemberData(nameof(Servers))]
    public async Task Client_pings_are_answered_and_flush_round_trips(ServerKind kind)
    {
        // The client pings every 100 ms and gives up after 20 unanswered PINGs: 30 PINGs go out while the test waits,
        // so a server that did not answer would be dropped, while a loaded machine has 2 s of slack.
        await using var server = await ServerUnderTest.StartAsync(kind);
        using var client = NatsClientConnection.Connect(server.Url, o => (o.PingInterval, o.MaxPingsOut) = (100, 20));
        await Task.Delay(TimeSpan.FromSeconds(3));
        Assert.False(client.Closed.IsCompleted, "closed: " + (client.Closed.IsCompleted ? await client.Closed : null));
        client.Connection.Flush(Wait);
        Assert.Equal(ConnState.CONNECTED, client.Connection.State);
    }

    [Theory(Timeout = 60_000)]
    [MemberData(nameof(Servers))]
    public async Task Idle_legacy_client_is_closed_as_stale_by_server_pings(ServerKind kind)
    {
        // NATS.Client 0.8.0 queues its PONG to a server PING without flushing it, so an idle connection never
        // answers: both servers close it with 'Stale Connection', which the client reports as such. (Any client
        // activity flushes the PONGs; the test above shows a client that pings stays up.)
        await using var server = await ServerUnderTest.StartAsync(
            kind,
            o => (o.PingInterval, o.MaxPingsOutstanding) = (TimeSpan.FromSeconds(2), 2),
            "ping_interval: \"2s\"\nping_max: 2\n");
        using var client = NatsClientConnection.Connect(server.Url);
        Assert.IsType<NATSStaleConnectionException>(await client.WaitClosedAsync(TimeSpan.FromSeconds(30)));
    }
}
