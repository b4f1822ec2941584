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
    private static readonly TimeSpan WaitSpan = NatsClients.Timeout;

    [Fact(Timeout = 60_000)]
    public async Task Bus_subscriber_receives_what_a_nats_client_publishes()
    {
        await using var broker = await TestBroker.StartAsync();
        await using var bus = broker.Bus.CreateClient(new BusClientOptions { Name = "bus-sub" });
        var received = new ConcurrentQueue<(string Subject, string Reply, string Payload)>();
        using var subscription = bus.Subscribe("telemetry.>", null, (in BusMessage m) => received.Enqueue(
            (Encoding.UTF8.GetString(m.Subject), Encoding.UTF8.GetString(m.ReplyTo), Encoding.UTF8.GetString(m.Payload.ToArray()))));

        await using var client = await NatsClients.ConnectAsync(broker.Url);
        for (var i = 0; i < 20; i++)
        {
            await client.PublishAsync($"telemetry.dev{i % 2}", Encoding.UTF8.GetBytes($"t-{i}"), replyTo: i == 0 ? "inbox.0" : null);
        }

        await client.PingAsync();
        Assert.True(await Eventually.TrueAsync(() => received.Count >= 20), $"bus got {received.Count} of 20");
        var messages = received.ToList();
        Assert.Equal(Enumerable.Range(0, 20).Select(i => $"t-{i}"), messages.Select(m => m.Payload));
        Assert.Equal(Enumerable.Range(0, 20).Select(i => $"telemetry.dev{i % 2}"), messages.Select(m => m.Subject));
        Assert.Equal("inbox.0", messages[0].Reply);
        Assert.Equal(20, subscription.Delivered);
    }

    [Fact(Timeout = 60_000)]
    public async Task Nats_subscribers_receive_bus_publishes_with_headers_or_without_them_when_not_supported()
    {
        await using var broker = await TestBroker.StartAsync();
        await using var client = await NatsClients.ConnectAsync(broker.Url);
        await using var sub = await client.SubscribeCoreAsync<string>("alerts.*");
        await client.PingAsync();

        // A client that announced no header support (the .NET client always announces it, so this one is raw).
        await using var headerless = await RawClient.ConnectAsync(broker.EndPoint);
        await headerless.SendAsync("CONNECT {\"verbose\":false,\"headers\":false}\r\nSUB alerts.* 1\r\n");
        Assert.Equal(["PONG"], (await headerless.PingAndCollectAsync()).Lines);

        await using var bus = broker.Bus.CreateClient();
        bus.Publish("alerts.disk", "full"u8.ToArray(), replyTo: "ops.inbox");
        var headers = new ReadOnlySequence<byte>("NATS/1.0\r\nSeverity: high\r\n\r\n"u8.ToArray());
        bus.Publish("alerts.cpu"u8, default, headers, new ReadOnlySequence<byte>("hot"u8.ToArray()));

        var first = await sub.NextAsync();
        Assert.Equal(("alerts.disk", "ops.inbox", "full"), (first.Subject, first.ReplyTo, first.Data));
        Assert.Null(first.Headers);
        var second = await sub.NextAsync();
        Assert.Equal(("alerts.cpu", "hot"), (second.Subject, second.Data));
        Assert.Equal("high", second.Headers?["Severity"].ToString());

        // The broker sends the header-less client the payload alone, as nats-server does.
        var stripped = await headerless.PingAndCollectAsync();
        Assert.Equal(["MSG alerts.disk 1 ops.inbox 4", "full", "MSG alerts.cpu 1 3", "hot", "PONG"], stripped.Lines);
    }

    [Fact(Timeout = 60_000)]
    public async Task Bus_request_is_answered_by_a_nats_responder()
    {
        await using var broker = await TestBroker.StartAsync();
        await using var responder = await NatsClients.ConnectAsync(broker.Url, "responder");
        await using var service = await SubscriptionHandler.RespondAsync(
            responder, "svc.upper", data => Encoding.UTF8.GetBytes(Encoding.UTF8.GetString(data).ToUpperInvariant()), "svc");

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

        await using var client = await NatsClients.ConnectAsync(broker.Url);
        Assert.Equal("olleh", (await client.RequestAsync<string, string>("svc.reverse", "hello")).Data);
        var replies = await Task.WhenAll(Enumerable.Range(0, 10).Select(i =>
            client.RequestAsync<string, string>("svc.reverse", $"ab{i}").AsTask()));
        Assert.Equal(Enumerable.Range(0, 10).Select(i => $"{i}ba"), replies.Select(r => r.Data));
    }

    [Fact(Timeout = 60_000)]
    public async Task Bus_request_without_any_subscriber_fails_with_no_responders()
    {
        await using var broker = await TestBroker.StartAsync();
        await using var bus = broker.Bus.CreateClient();
        await Assert.ThrowsAsync<NoRespondersException>(() => bus.RequestAsync("nobody.home", "?"u8.ToArray(), TimeSpan.FromSeconds(30)));

        // A socket subscriber counts as a responder.
        await using var client = await NatsClients.ConnectAsync(broker.Url);
        await using var listener = await SubscriptionHandler.RespondAsync(client, "nobody.home", _ => "here"u8.ToArray());
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
        await using var socketC = await NatsClients.ConnectAsync(broker.Url, "socket-c");
        await using var socketD = await NatsClients.ConnectAsync(broker.Url, "socket-d");
        await using var subC = await SubscriptionHandler.StartAsync(socketC, "work.items", m => Record(2, m.Data!), "pool");
        await using var subD = await SubscriptionHandler.StartAsync(socketD, "work.items", m => Record(3, m.Data!), "pool");

        // Half from a socket publisher, half from the bus.
        await using var publisher = await NatsClients.ConnectAsync(broker.Url, "publisher");
        await using var busPublisher = broker.Bus.CreateClient();
        for (var i = 0; i < total; i++)
        {
            var payload = BitConverter.GetBytes(i);
            if (i % 2 == 0)
            {
                await publisher.PublishAsync("work.items", payload);
            }
            else
            {
                busPublisher.Publish("work.items", payload);
            }
        }

        await publisher.PingAsync();
        Assert.True(await Eventually.TrueAsync(() => got.Sum(q => q.Count) >= total), $"delivered {got.Sum(q => q.Count)} of {total}");
        await socketC.PingAsync();
        await socketD.PingAsync();

        Assert.Equal(Enumerable.Range(0, total), got.SelectMany(q => q).Order());
        Assert.All(got, q => Assert.NotEmpty(q));

        static int Index(byte[] payload) => BitConverter.ToInt32(payload);

        ValueTask Record(int member, byte[] payload)
        {
            got[member].Enqueue(Index(payload));
            return default;
        }
    }
}
