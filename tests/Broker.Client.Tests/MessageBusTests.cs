using System.Buffers;
using System.Collections.Concurrent;
using System.Text;
using Broker.Abstractions;

namespace Broker.Client.Tests;

/// <summary>
/// The in-process <see cref="IMessageBus"/> contract end to end, with a real NATS client on the other side:
/// both directions of publish/subscribe, requests either way, no responders, and queue groups mixing bus and
/// socket members.
/// </summary>
public sealed class MessageBusTests
{
    private const int Wait = NatsClientConnection.DefaultTimeoutMilliseconds;
    private static readonly TimeSpan WaitSpan = TimeSpan.FromMilliseconds(Wait);

    [Fact(Timeout = 60_000)]
    public async Task Bus_subscriber_receives_what_a_nats_client_publishes()
    {
        await using var broker = await TestBroker.StartAsync();
        await using var bus = broker.Bus.CreateClient(new BusClientOptions { Name = "bus-sub" });
        var received = new ConcurrentQueue<(string Subject, string Reply, string Payload)>();
        using var subscription = bus.Subscribe("telemetry.>", null, (in BusMessage m) => received.Enqueue(
            (Encoding.UTF8.GetString(m.Subject), Encoding.UTF8.GetString(m.ReplyTo), Encoding.UTF8.GetString(m.Payload.ToArray()))));

        using var client = NatsClientConnection.Connect(broker.Url);
        for (var i = 0; i < 20; i++)
        {
            client.Connection.Publish($"telemetry.dev{i % 2}", i == 0 ? "inbox.0" : null, Encoding.UTF8.GetBytes($"t-{i}"));
        }

        client.Connection.Flush(Wait);
        Assert.True(await Eventually.TrueAsync(() => received.Count >= 20), $"bus got {received.Count} of 20");
        var messages = received.ToList();
        Assert.Equal(Enumerable.Range(0, 20).Select(i => $"t-{i}"), messages.Select(m => m.Payload));
        Assert.Equal(Enumerable.Range(0, 20).Select(i => $"telemetry.dev{i % 2}"), messages.Select(m => m.Subject));
        Assert.Equal("inbox.0", messages[0].Reply);
        Assert.Equal(20, subscription.Delivered);
    }

    [Fact(Timeout = 60_000)]
    public async Task Nats_subscriber_receives_bus_publishes_with_headers_stripped_for_it()
    {
        await using var broker = await TestBroker.StartAsync();
        using var client = NatsClientConnection.Connect(broker.Url);
        using var sub = client.Connection.SubscribeSync("alerts.*");
        client.Connection.Flush(Wait);

        await using var bus = broker.Bus.CreateClient();
        bus.Publish("alerts.disk", "full"u8.ToArray(), replyTo: "ops.inbox");

        // This client announced no header support: the broker sends the payload alone, as nats-server does.
        var headers = new ReadOnlySequence<byte>("NATS/1.0\r\nSeverity: high\r\n\r\n"u8.ToArray());
        bus.Publish("alerts.cpu"u8, default, headers, new ReadOnlySequence<byte>("hot"u8.ToArray()));

        var first = sub.NextMessage(Wait);
        Assert.Equal(("alerts.disk", "ops.inbox", "full"), (first.Subject, first.Reply, Encoding.UTF8.GetString(first.Data)));
        var second = sub.NextMessage(Wait);
        Assert.Equal(("alerts.cpu", "hot"), (second.Subject, Encoding.UTF8.GetString(second.Data)));
    }

    [Fact(Timeout = 60_000)]
    public async Task Bus_request_is_answered_by_a_nats_responder()
    {
        await using var broker = await TestBroker.StartAsync();
        using var responder = NatsClientConnection.Connect(broker.Url, name: "responder");
        using var service = responder.Connection.SubscribeAsync("svc.upper", "svc", (_, e) =>
            responder.Connection.Publish(e.Message.Reply, Encoding.UTF8.GetBytes(Encoding.UTF8.GetString(e.Message.Data).ToUpperInvariant())));
        responder.Connection.Flush(Wait);

        await using var bus = broker.Bus.CreateClient();
        for (var i = 0; i < 5; i++)
        {
            var reply = await bus.RequestAsync("svc.upper", Encoding.UTF8.GetBytes($"bus-{i}"), WaitSpan);
            Assert.Equal($"BUS-{i}", Encoding.UTF8.GetString(reply.Payload.Span));
            Assert.StartsWith("_INBOX.", reply.Subject, StringComparison.Ordinal);
        }
    }

    [Fact(Timeout = 60_000)]
    public async Task Nats_request_is_answered_by_a_bus_responder()
    {
        await using var broker = await TestBroker.StartAsync();
        await using var bus = broker.Bus.CreateClient(new BusClientOptions { Name = "bus-service" });
        var busClient = bus;
        using var service = bus.Subscribe("svc.reverse", null, (in BusMessage m) =>
        {
            var text = Encoding.UTF8.GetString(m.Payload.ToArray());
            busClient.Publish(Encoding.UTF8.GetString(m.ReplyTo), Encoding.UTF8.GetBytes(new string([.. text.Reverse()])));
        });

        using var client = NatsClientConnection.Connect(broker.Url);
        Assert.Equal("olleh", Encoding.UTF8.GetString(client.Connection.Request("svc.reverse", "hello"u8.ToArray(), Wait).Data));
        var replies = await Task.WhenAll(Enumerable.Range(0, 10).Select(i =>
            client.Connection.RequestAsync("svc.reverse", Encoding.UTF8.GetBytes($"ab{i}"), Wait)));
        Assert.Equal(Enumerable.Range(0, 10).Select(i => $"{i}ba"), replies.Select(r => Encoding.UTF8.GetString(r.Data)));
    }

    [Fact(Timeout = 60_000)]
    public async Task Bus_request_without_any_subscriber_fails_with_no_responders()
    {
        await using var broker = await TestBroker.StartAsync();
        await using var bus = broker.Bus.CreateClient();
        await Assert.ThrowsAsync<NoRespondersException>(() => bus.RequestAsync("nobody.home", "?"u8.ToArray(), TimeSpan.FromSeconds(30)));

        // A socket subscriber counts as a responder.
        using var client = NatsClientConnection.Connect(broker.Url);
        using var listener = client.Connection.SubscribeAsync("nobody.home", (_, e) => client.Connection.Publish(e.Message.Reply, "here"u8.ToArray()));
        client.Connection.Flush(Wait);
        Assert.Equal("here", Encoding.UTF8.GetString((await bus.RequestAsync("nobody.home", "?"u8.ToArray(), WaitSpan)).Payload.Span));
    }

    [Fact(Timeout = 60_000)]
    public async Task Queue_group_mixing_bus_and_socket_members_delivers_each_message_once()
    {
        const int total = 300;
        await using var broker = await TestBroker.StartAsync();
        var got = Enumerable.Range(0, 4).Select(_ => new ConcurrentQueue<int>()).ToList();

        await using var busA = broker.Bus.CreateClient(new BusClientOptions { Name = "bus-a" });
        await using var busB = broker.Bus.CreateClient(new BusClientOptions { Name = "bus-b" });
        using var subA = busA.Subscribe("work.items", "pool", (in BusMessage m) => got[0].Enqueue(Index(m.Payload.ToArray())));
        using var subB = busB.Subscribe("work.items", "pool", (in BusMessage m) => got[1].Enqueue(Index(m.Payload.ToArray())));
        using var socketC = NatsClientConnection.Connect(broker.Url, name: "socket-c");
        using var socketD = NatsClientConnection.Connect(broker.Url, name: "socket-d");
        socketC.Connection.SubscribeAsync("work.items", "pool", (_, e) => got[2].Enqueue(Index(e.Message.Data)));
        socketD.Connection.SubscribeAsync("work.items", "pool", (_, e) => got[3].Enqueue(Index(e.Message.Data)));
        socketC.Connection.Flush(Wait);
        socketD.Connection.Flush(Wait);

        // Half from a socket publisher, half from the bus.
        using var publisher = NatsClientConnection.Connect(broker.Url, name: "publisher");
        await using var busPublisher = broker.Bus.CreateClient();
        for (var i = 0; i < total; i++)
        {
            var payload = BitConverter.GetBytes(i);
            if (i % 2 == 0)
            {
                publisher.Connection.Publish("work.items", payload);
            }
            else
            {
                busPublisher.Publish("work.items", payload);
            }
        }

        publisher.Connection.Flush(Wait);
        Assert.True(await Eventually.TrueAsync(() => got.Sum(q => q.Count) >= total), $"delivered {got.Sum(q => q.Count)} of {total}");
        socketC.Connection.Flush(Wait);
        socketD.Connection.Flush(Wait);

        Assert.Equal(Enumerable.Range(0, total), got.SelectMany(q => q).Order());
        Assert.All(got, q => Assert.NotEmpty(q));

        static int Index(byte[] payload) => BitConverter.ToInt32(payload);
    }
}
