using System.Collections.Concurrent;
using System.Globalization;
using System.Text;

namespace Broker.Client.Tests;

/// <summary>
/// Core messaging through the .NET client, each case against our broker and the reference nats-server:
/// publish/subscribe, wildcards, queue groups, request/reply, auto-unsubscribe, flush and server PINGs.
/// </summary>
public sealed class PubSubTests
{
    public static TheoryData<ServerKind> Servers => new() { ServerKind.Ours, ServerKind.Reference };

    [Theory(Timeout = 60_000)]
    [MemberData(nameof(Servers))]
    public async Task Messages_between_two_connections_arrive_in_order_and_intact(ServerKind kind)
    {
        await using var server = await ServerUnderTest.StartAsync(kind);
        await using var subscriber = await NatsClients.ConnectAsync(server.Url, "subscriber");
        await using var publisher = await NatsClients.ConnectAsync(server.Url, "publisher");
        await using var sub = await subscriber.SubscribeCoreAsync<byte[]>("orders.created");
        await subscriber.PingAsync();

        var binary = Enumerable.Range(0, 256).Select(i => (byte)i).ToArray();
        var payloads = Enumerable.Range(0, 50).Select(i => Encoding.UTF8.GetBytes($"order-{i}")).Append([]).Append(binary).ToList();
        foreach (var payload in payloads)
        {
            await publisher.PublishAsync("orders.created", payload);
        }

        await publisher.PublishAsync("orders.created", new byte[] { 1, 2, 3 }, replyTo: "reply.here");
        await publisher.PingAsync();

        foreach (var payload in payloads)
        {
            var message = await sub.NextAsync();
            Assert.Equal("orders.created", message.Subject);
            Assert.Equal(payload, message.Data ?? []);
        }

        var withReply = await sub.NextAsync();
        Assert.Equal("reply.here", withReply.ReplyTo);
        Assert.Equal([1, 2, 3], withReply.Data);
    }

    [Theory(Timeout = 60_000)]
    [MemberData(nameof(Servers))]
    public async Task Wildcard_subscriptions_match_one_token_or_the_tail(ServerKind kind)
    {
        await using var server = await ServerUnderTest.StartAsync(kind);
        await using var connection = await NatsClients.ConnectAsync(server.Url);
        var received = new ConcurrentDictionary<string, ConcurrentQueue<string>>();
        string[] patterns = ["sensor.*", "sensor.>", "sensor.*.temp", "*.kitchen.>"];
        var handlers = new List<SubscriptionHandler>();
        foreach (var pattern in patterns)
        {
            handlers.Add(await SubscriptionHandler.StartAsync(connection, pattern, m =>
            {
                received.GetOrAdd(pattern, _ => new ConcurrentQueue<string>()).Enqueue(m.Subject);
                return default;
            }));
        }

        await using var done = await connection.SubscribeCoreAsync<byte[]>("done");
        await connection.PingAsync();

        foreach (var subject in new[] { "sensor", "sensor.kitchen", "sensor.kitchen.temp", "sensor.kitchen.temp.max", "house.kitchen.light", "sensor.hall.temp" })
        {
            await connection.PublishAsync(subject, Array.Empty<byte>());
        }

        // The handlers run on their own tasks: the last message marks the end of the batch, and the handlers have
        // seen the others once each of their queues holds what was routed before it.
        await connection.PublishAsync("done", Array.Empty<byte>());
        await done.NextAsync();
        await connection.PingAsync();
        await Eventually.TrueAsync(() => received.Values.Sum(q => q.Count) >= 10);

        Assert.Equal(["sensor.kitchen"], Received("sensor.*"));
        Assert.Equal(["sensor.kitchen", "sensor.kitchen.temp", "sensor.kitchen.temp.max", "sensor.hall.temp"], Received("sensor.>"));
        Assert.Equal(["sensor.kitchen.temp", "sensor.hall.temp"], Received("sensor.*.temp"));
        Assert.Equal(["sensor.kitchen.temp", "sensor.kitchen.temp.max", "house.kitchen.light"], Received("*.kitchen.>"));
        foreach (var handler in handlers)
        {
            await handler.DisposeAsync();
        }

        List<string> Received(string pattern) => [.. received.GetValueOrDefault(pattern) ?? []];
    }

    [Theory(Timeout = 60_000)]
    [MemberData(nameof(Servers))]
    public async Task Queue_group_of_three_gets_each_message_exactly_once_and_every_member_some(ServerKind kind)
    {
        const int total = 300;
        await using var server = await ServerUnderTest.StartAsync(kind);
        var members = new List<NatsConnection>();
        var handlers = new List<SubscriptionHandler>();
        var got = Enumerable.Range(0, 3).Select(_ => new ConcurrentQueue<int>()).ToList();
        for (var i = 0; i < got.Count; i++)
        {
            var queue = got[i];
            members.Add(await NatsClients.ConnectAsync(server.Url, $"worker-{i}"));
            handlers.Add(await SubscriptionHandler.StartAsync(members[i], "jobs", m =>
            {
                queue.Enqueue(int.Parse(Encoding.ASCII.GetString(m.Data!), CultureInfo.InvariantCulture));
                return default;
            }, "workers"));
        }

        await using var publisher = await NatsClients.ConnectAsync(server.Url, "publisher");
        for (var i = 0; i < total; i++)
        {
            await publisher.PublishAsync("jobs", Encoding.ASCII.GetBytes(i.ToString(CultureInfo.InvariantCulture)));
        }

        await publisher.PingAsync();
        await Eventually.TrueAsync(() => got.Sum(q => q.Count) >= total);

        // A duplicate would arrive before the PONG of a flush on the member's own connection.
        foreach (var member in members)
        {
            await member.PingAsync();
        }

        var all = got.SelectMany(q => q).Order().ToList();
        Assert.Equal(Enumerable.Range(0, total), all);
        Assert.All(got, q => Assert.NotEmpty(q));
        foreach (var handler in handlers)
        {
            await handler.DisposeAsync();
        }

        foreach (var member in members)
        {
            await member.DisposeAsync();
        }
    }

    [Theory(Timeout = 60_000)]
    [MemberData(nameof(Servers))]
    public async Task Request_reply_through_the_client_request_api(ServerKind kind)
    {
        await using var server = await ServerUnderTest.StartAsync(kind);
        await using var responder = await NatsClients.ConnectAsync(server.Url, "responder");
        await using var service = await SubscriptionHandler.RespondAsync(
            responder, "svc.upper", data => Encoding.UTF8.GetBytes(Encoding.UTF8.GetString(data).ToUpperInvariant()));

        await using var requester = await NatsClients.ConnectAsync(server.Url, "requester");
        var reply = await requester.RequestAsync<string, string>("svc.upper", "hello");
        Assert.Equal("HELLO", reply.Data);

        var replies = await Task.WhenAll(Enumerable.Range(0, 20).Select(i =>
            requester.RequestAsync<string, string>("svc.upper", $"req-{i}").AsTask()));
        Assert.Equal(Enumerable.Range(0, 20).Select(i => $"REQ-{i}"), replies.Select(r => r.Data));

        // A direct reply subscription per request instead of the shared inbox.
        await using var direct = await NatsClients.ConnectAsync(server.Url, "direct", o => o with { RequestReplyMode = NatsRequestReplyMode.Direct });
        Assert.Equal("DIRECT", (await direct.RequestAsync<string, string>("svc.upper", "direct")).Data);

        // The old request style: a fresh inbox per request, subscribed with UNSUB max 1.
        await using var oldStyle = await NatsClients.ConnectAsync(server.Url, "old-style");
        var inbox = oldStyle.NewInbox();
        await using var once = await oldStyle.SubscribeCoreAsync<string>(inbox, opts: new NatsSubOpts { MaxMsgs = 1 });
        await oldStyle.PublishAsync("svc.upper", "old", replyTo: inbox);
        Assert.Equal("OLD", (await once.NextAsync()).Data);
    }

    [Theory(Timeout = 60_000)]
    [MemberData(nameof(Servers))]
    public async Task Request_without_responders_fails_at_once_for_the_client_and_times_out_without_no_responders_support(ServerKind kind)
    {
        // The .NET client sends headers and no_responders in CONNECT, so the server answers a request nobody
        // subscribes to with a 503 status at once.
        await using var server = await ServerUnderTest.StartAsync(kind);
        await using var client = await NatsClients.ConnectAsync(server.Url);
        var events = ClientEvents.Watch(client);
        await Assert.ThrowsAsync<NatsNoRespondersException>(async () =>
            await client.RequestAsync<string, string>("nobody.home", "?", replyOpts: new NatsSubOpts { Timeout = TimeSpan.FromSeconds(30) }));
        Assert.Equal(NatsConnectionState.Open, client.ConnectionState);
        Assert.False(events.Disconnected.IsCompleted);

        // A client that sends neither headers nor no_responders gets no 503: it just waits.
        await using var legacy = await server.ConnectAsync();
        await legacy.SendAsync("CONNECT {\"verbose\":false}\r\nSUB _INBOX.x 1\r\nPUB nobody.home _INBOX.x 1\r\n?\r\n");
        var transcript = await legacy.PingAndCollectAsync();
        Assert.Equal(["PONG"], transcript.Lines);
        Assert.Null(await legacy.ReadOtherThanPingAsync(TimeSpan.FromMilliseconds(300)));
    }

    [Theory(Timeout = 60_000)]
    [MemberData(nameof(Servers))]
    public async Task AutoUnsubscribe_makes_the_server_stop_after_max_messages(ServerKind kind)
    {
        await using var server = await ServerUnderTest.StartAsync(kind);
        await using var connection = new NatsConnection(NatsClients.Options(server.Url));
        var tap = ProtocolTap.Attach(connection);
        await connection.ConnectAsync();
        await using var limited = await connection.SubscribeCoreAsync<byte[]>("ticks", opts: new NatsSubOpts { MaxMsgs = 3 });
        await using var marker = await connection.SubscribeCoreAsync<byte[]>("marker");
        await connection.PingAsync();

        for (var i = 0; i < 10; i++)
        {
            await connection.PublishAsync("ticks", new[] { (byte)i });
        }

        await connection.PublishAsync("marker", Array.Empty<byte>());
        await connection.PingAsync();
        await marker.NextAsync();

        for (var i = 0; i < 3; i++)
        {
            Assert.Equal([(byte)i], (await limited.NextAsync()).Data!);
        }

        await Assert.ThrowsAsync<InvalidOperationException>(() => limited.NextAsync(TimeSpan.FromMilliseconds(200)));

        // The socket saw every MSG the server sent: 3 ticks and the marker, not the 7 ticks past the limit.
        Assert.Equal(4, tap.Count("MSG"));
    }

    [Theory(Timeout = 60_000)]
    [MemberData(nameof(Servers))]
    public async Task Verbose_connection_absorbs_the_acknowledgements(ServerKind kind)
    {
        await using var server = await ServerUnderTest.StartAsync(kind);
        await using var client = new NatsConnection(NatsClients.Options(server.Url) with { Verbose = true });
        var tap = ProtocolTap.Attach(client);
        await client.ConnectAsync();
        var events = ClientEvents.Watch(client);
        await using var sub = await client.SubscribeCoreAsync<byte[]>("chatty");
        for (var i = 0; i < 5; i++)
        {
            await client.PublishAsync("chatty", new[] { (byte)i });
        }

        await client.PingAsync();
        for (var i = 0; i < 5; i++)
        {
            Assert.Equal([(byte)i], (await sub.NextAsync()).Data!);
        }

        // One +OK for the CONNECT, the SUB and each PUB.
        Assert.True(tap.Count("+OK") >= 7, string.Join(" ", tap.Operations));
        Assert.Equal(NatsConnectionState.Open, client.ConnectionState);
        Assert.Empty(events.ServerErrors);
    }

    [Theory(Timeout = 60_000)]
    [MemberData(nameof(Servers))]
    public async Task Client_pings_are_answered_and_flush_round_trips(ServerKind kind)
    {
        // The client pings every 100 ms and gives up after 20 unanswered PINGs: 30 PINGs go out while the test waits,
        // so a server that did not answer would be dropped, while a loaded machine has 2 s of slack.
        await using var server = await ServerUnderTest.StartAsync(kind);
        await using var client = await NatsClients.ConnectAsync(
            server.Url, configure: o => o with { PingInterval = TimeSpan.FromMilliseconds(100), MaxPingOut = 20 });
        var events = ClientEvents.Watch(client);
        await Task.Delay(TimeSpan.FromSeconds(3));
        Assert.False(events.Disconnected.IsCompleted, "disconnected: " + (events.Disconnected.IsCompleted ? await events.Disconnected : null));
        await client.PingAsync();
        Assert.Equal(NatsConnectionState.Open, client.ConnectionState);
    }

    [Theory(Timeout = 60_000)]
    [MemberData(nameof(Servers))]
    public async Task Idle_client_answers_server_pings_and_stays_connected(ServerKind kind)
    {
        // The server pings every second and closes a connection with 2 PINGs unanswered: an idle client that answers
        // (as this one does; the legacy 0.8.0 client did not flush its PONGs) outlives several ping intervals.
        await using var server = await ServerUnderTest.StartAsync(
            kind,
            o => (o.PingInterval, o.MaxPingsOutstanding) = (TimeSpan.FromSeconds(1), 2),
            "ping_interval: \"1s\"\nping_max: 2\n");
        await using var client = new NatsConnection(NatsClients.Options(server.Url) with { PingInterval = TimeSpan.FromMinutes(10) });
        var tap = ProtocolTap.Attach(client);
        await client.ConnectAsync();
        var events = ClientEvents.Watch(client);

        // Three pings take three seconds; a loaded machine may delay the server's timer, so wait up to ten.
        var deadline = DateTime.UtcNow.AddSeconds(10);
        while (tap.Count("PING") < 3 && DateTime.UtcNow < deadline)
        {
            await Task.Delay(100);
        }

        Assert.True(tap.Count("PING") >= 3, string.Join(" ", tap.Operations));
        Assert.False(events.Disconnected.IsCompleted);
        Assert.Empty(events.ServerErrors);
        await client.PingAsync();
    }
}
