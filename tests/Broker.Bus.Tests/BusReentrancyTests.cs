using System.Buffers;
using System.Buffers.Binary;
using System.Collections.Concurrent;
using System.Text;
using Broker.Abstractions;
using NATS.Client.Core;

namespace Broker.Bus.Tests;

/// <summary>
/// What a handler may do with the bus (publish, request, subscribe, unsubscribe, through any client, its own included,
/// from any thread) without deadlock, recursion or overlap, and the one documented trap: blocking on a request that only
/// a handler of the same client can answer.
/// </summary>
public sealed class BusReentrancyTests
{
    private static readonly TimeSpan Wait = TimeSpan.FromSeconds(20);

    [Fact(Timeout = 60_000)]
    public async Task Handlers_answering_each_other_through_their_own_client_neither_recurse_nor_overlap()
    {
        // Called on the publisher's thread, 20,000 exchanges would nest 20,000 handler calls deep.
        const int Exchanges = 20_000;
        await using var broker = await TestBroker.StartAsync();
        await using var client = broker.Bus.CreateClient(new BusClientOptions { Name = "ping-pong" });
        var depth = 0;
        var deepest = 0;
        var done = new TaskCompletionSource<int>(TaskCreationOptions.RunContinuationsAsynchronously);

        void Play(in BusMessage message, string next)
        {
            var inside = Interlocked.Increment(ref depth);
            deepest = Math.Max(deepest, inside);
            var count = BinaryPrimitives.ReadInt32BigEndian(message.Payload.FirstSpan);
            if (count == Exchanges)
            {
                done.TrySetResult(count);
            }
            else
            {
                client.Publish(next, Number(count + 1));
            }

            Interlocked.Decrement(ref depth);
        }

        using var ping = client.Subscribe("game.ping", null, (in BusMessage m) => Play(m, "game.pong"));
        using var pong = client.Subscribe("game.pong", null, (in BusMessage m) => Play(m, "game.ping"));
        client.Publish("game.ping", Number(0));

        Assert.Equal(Exchanges, await done.Task.WaitAsync(Wait));
        Assert.Equal(1, deepest);
    }

    [Fact(Timeout = 60_000)]
    public async Task Two_clients_whose_handlers_publish_through_each_other_while_both_publish_from_their_own_threads_do_not_deadlock()
    {
        // The deadlock: each handler ran under the other client's publish lock and took its own.
        const int PerSide = 5_000;
        await using var broker = await TestBroker.StartAsync();
        await using var a = broker.Bus.CreateClient(new BusClientOptions { Name = "a" });
        await using var b = broker.Bus.CreateClient(new BusClientOptions { Name = "b" });
        await using var observer = broker.Bus.CreateClient(new BusClientOptions { Name = "observer" });
        var counts = new ConcurrentDictionary<string, int>();
        using var count = observer.Subscribe("out.>", null, (in BusMessage m) => counts.AddOrUpdate(Encoding.UTF8.GetString(m.Subject), 1, (_, n) => n + 1));

        // Each handler publishes through the other side's client and through its own.
        using var toA = a.Subscribe("to.a", null, (in BusMessage m) =>
        {
            b.Publish("out.a.via-b", m.Payload.ToArray());
            a.Publish("out.a.via-a", m.Payload.ToArray());
        });
        using var toB = b.Subscribe("to.b", null, (in BusMessage m) =>
        {
            a.Publish("out.b.via-a", m.Payload.ToArray());
            b.Publish("out.b.via-b", m.Payload.ToArray());
        });

        var sides = new[]
        {
            Task.Factory.StartNew(() => PublishMany(a, "to.b", PerSide), TaskCreationOptions.LongRunning),
            Task.Factory.StartNew(() => PublishMany(b, "to.a", PerSide), TaskCreationOptions.LongRunning),
        };
        await Task.WhenAll(sides).WaitAsync(Wait);

        var expected = new Dictionary<string, int> { ["out.a.via-b"] = PerSide, ["out.a.via-a"] = PerSide, ["out.b.via-a"] = PerSide, ["out.b.via-b"] = PerSide };
        Assert.True(await Eventually.TrueAsync(() => expected.All(e => counts.GetValueOrDefault(e.Key) == e.Value), Wait), string.Join(", ", counts));
    }

    [Fact(Timeout = 60_000)]
    public async Task A_handler_can_publish_to_its_own_subscriptions_through_its_own_client()
    {
        await using var broker = await TestBroker.StartAsync();
        await using var client = broker.Bus.CreateClient();
        var forwarded = new ConcurrentQueue<string>();
        using var relay = client.Subscribe("relay.in", null, (in BusMessage m) => client.Publish("relay.out", m.Payload.ToArray()));
        using var sink = client.Subscribe("relay.out", null, (in BusMessage m) => forwarded.Enqueue(Encoding.UTF8.GetString(m.Payload.ToArray())));

        for (var i = 0; i < 100; i++)
        {
            client.Publish("relay.in", Encoding.UTF8.GetBytes($"m{i}"));
        }

        Assert.True(await Eventually.TrueAsync(() => forwarded.Count == 100, Wait), $"{forwarded.Count} of 100");
        Assert.Equal(Enumerable.Range(0, 100).Select(i => $"m{i}"), forwarded);
    }

    [Fact(Timeout = 60_000)]
    public async Task A_handler_blocking_on_a_request_through_its_own_client_gets_the_answer_of_another_client()
    {
        await using var broker = await TestBroker.StartAsync();
        await using var service = broker.Bus.CreateClient(new BusClientOptions { Name = "service" });
        using var upper = service.Subscribe("svc.upper", null, (in BusMessage m) =>
            service.Publish(Encoding.UTF8.GetString(m.ReplyTo), Encoding.UTF8.GetBytes(Encoding.UTF8.GetString(m.Payload.ToArray()).ToUpperInvariant())));

        await using var worker = broker.Bus.CreateClient(new BusClientOptions { Name = "worker" });
        var answers = new ConcurrentQueue<string>();
        using var work = worker.Subscribe("work", null, (in BusMessage m) =>
        {
            // Synchronous on purpose: the reply must not wait behind this handler.
            var reply = worker.RequestAsync("svc.upper", m.Payload.ToArray(), Wait).GetAwaiter().GetResult();
            answers.Enqueue(Encoding.UTF8.GetString(reply.Payload.Span));
        });

        for (var i = 0; i < 50; i++)
        {
            worker.Publish("work", Encoding.UTF8.GetBytes($"job{i}"));
        }

        Assert.True(await Eventually.TrueAsync(() => answers.Count == 50, Wait), $"{answers.Count} of 50");
        Assert.Equal(Enumerable.Range(0, 50).Select(i => $"JOB{i}"), answers);
    }

    [Fact(Timeout = 60_000)]
    public async Task A_handler_blocking_on_a_request_through_its_own_client_gets_the_answer_of_a_nats_client()
    {
        await using var broker = await TestBroker.StartAsync();
        await using var nats = new NatsConnection(new NatsOpts { Url = broker.Url, Name = "nats-service" });
        await using var subscription = await nats.SubscribeCoreAsync<string>("svc.reverse");
        var serving = Task.Run(async () =>
        {
            await foreach (var request in subscription.Msgs.ReadAllAsync())
            {
                await request.ReplyAsync(new string([.. request.Data!.Reverse()]));
            }
        });
        await nats.PingAsync();

        await using var worker = broker.Bus.CreateClient();
        var answers = new ConcurrentQueue<string>();
        using var work = worker.Subscribe("work", null, (in BusMessage m) =>
        {
            var reply = worker.RequestAsync("svc.reverse", m.Payload.ToArray(), Wait).GetAwaiter().GetResult();
            answers.Enqueue(Encoding.UTF8.GetString(reply.Payload.Span));
        });

        for (var i = 0; i < 20; i++)
        {
            worker.Publish("work", Encoding.UTF8.GetBytes($"ab{i:00}"));
        }

        Assert.True(await Eventually.TrueAsync(() => answers.Count == 20, Wait), $"{answers.Count} of 20");
        Assert.Equal(Enumerable.Range(0, 20).Select(i => $"{i % 10}{i / 10}ba"), answers);
    }

    [Fact(Timeout = 60_000)]
    public async Task A_handler_awaiting_a_request_answered_by_its_own_client_gets_the_answer()
    {
        await using var broker = await TestBroker.StartAsync();
        await using var client = broker.Bus.CreateClient();
        using var echo = client.Subscribe("svc.echo", null, (in BusMessage m) => client.Publish(Encoding.UTF8.GetString(m.ReplyTo), m.Payload.ToArray()));
        var answers = new ConcurrentQueue<string>();
        using var work = client.Subscribe("work", null, (in BusMessage m) =>
        {
            // Awaited, not blocked on: the handler returns and the client's next message (the request) is served.
            var payload = m.Payload.ToArray();
            _ = Task.Run(async () =>
            {
                var reply = await client.RequestAsync("svc.echo", payload, Wait);
                answers.Enqueue(Encoding.UTF8.GetString(reply.Payload.Span));
            });
        });

        for (var i = 0; i < 20; i++)
        {
            client.Publish("work", Encoding.UTF8.GetBytes($"e{i}"));
        }

        Assert.True(await Eventually.TrueAsync(() => answers.Count == 20, Wait), $"{answers.Count} of 20");
        Assert.Equal(Enumerable.Range(0, 20).Select(i => $"e{i}").Order(), answers.Order());
    }

    [Fact(Timeout = 60_000)]
    public async Task A_handler_blocking_on_a_request_only_its_own_client_can_answer_times_out_instead_of_hanging()
    {
        // The documented trap: handlers of one client run one at a time, so the answering handler waits behind the
        // blocked one. The request ends with its timeout; nothing hangs and the client goes on working afterwards.
        await using var broker = await TestBroker.StartAsync();
        await using var client = broker.Bus.CreateClient();
        using var echo = client.Subscribe("svc.echo", null, (in BusMessage m) => client.Publish(Encoding.UTF8.GetString(m.ReplyTo), m.Payload.ToArray()));
        var outcome = new TaskCompletionSource<Exception?>(TaskCreationOptions.RunContinuationsAsynchronously);
        using var work = client.Subscribe("work", null, (in BusMessage _) =>
        {
            try
            {
                client.RequestAsync("svc.echo", "x"u8.ToArray(), TimeSpan.FromMilliseconds(300)).GetAwaiter().GetResult();
                outcome.TrySetResult(null);
            }
            catch (TimeoutException ex)
            {
                outcome.TrySetResult(ex);
            }
        });

        client.Publish("work", "go"u8.ToArray());
        Assert.IsType<TimeoutException>(await outcome.Task.WaitAsync(Wait));

        var reply = await client.RequestAsync("svc.echo", "after"u8.ToArray(), Wait);
        Assert.Equal("after", Encoding.UTF8.GetString(reply.Payload.Span));
    }

    [Fact(Timeout = 60_000)]
    public async Task A_handler_can_subscribe_and_unsubscribe_through_its_own_client_including_its_own_subscription()
    {
        await using var broker = await TestBroker.StartAsync();
        await using var client = broker.Bus.CreateClient();
        var seen = new ConcurrentQueue<string>();
        IBusSubscription? added = null;
        using var control = client.Subscribe("control", null, (in BusMessage m) =>
        {
            switch (Encoding.UTF8.GetString(m.Payload.ToArray()))
            {
                case "add":
                    added = client.Subscribe("dynamic", null, (in BusMessage d) =>
                    {
                        seen.Enqueue(Encoding.UTF8.GetString(d.Payload.ToArray()));

                        // Unsubscribing itself from inside its own handler.
                        added!.Dispose();
                    });
                    client.Publish("control", "added"u8.ToArray());
                    break;
                case "added":
                    client.Publish("dynamic", "first"u8.ToArray());
                    client.Publish("dynamic", "second"u8.ToArray());
                    break;
            }
        });

        client.Publish("control", "add"u8.ToArray());
        Assert.True(await Eventually.TrueAsync(() => !seen.IsEmpty, Wait));

        // "second" was queued before the first handler call unsubscribed: it is dropped, as after an UNSUB.
        await Task.Delay(200);
        Assert.Equal(["first"], seen);
    }

    [Fact(Timeout = 60_000)]
    public async Task Messages_of_one_producer_reach_a_subscription_in_order_and_handlers_of_a_client_never_overlap()
    {
        const int Count = 10_000;
        await using var broker = await TestBroker.StartAsync();
        await using var subscriber = broker.Bus.CreateClient();
        var fromNats = new List<int>();
        var fromBus = new List<int>();
        var inside = 0;
        var overlapped = false;

        void Record(List<int> list, in BusMessage m)
        {
            overlapped |= Interlocked.Increment(ref inside) != 1;
            list.Add(BinaryPrimitives.ReadInt32BigEndian(m.Payload.FirstSpan));
            Interlocked.Decrement(ref inside);
        }

        using var a = subscriber.Subscribe("seq.nats", null, (in BusMessage m) => Record(fromNats, m));
        using var b = subscriber.Subscribe("seq.bus", null, (in BusMessage m) => Record(fromBus, m));

        await using var nats = new NatsConnection(new NatsOpts { Url = broker.Url });
        await using var producer = broker.Bus.CreateClient();
        var busSide = Task.Factory.StartNew(() => PublishMany(producer, "seq.bus", Count), TaskCreationOptions.LongRunning);
        for (var i = 0; i < Count; i++)
        {
            await nats.PublishAsync("seq.nats", Number(i));
        }

        await nats.PingAsync();
        await busSide;
        Assert.True(await Eventually.TrueAsync(() => fromNats.Count == Count && fromBus.Count == Count, Wait), $"{fromNats.Count} / {fromBus.Count}");
        Assert.Equal(Enumerable.Range(0, Count), fromNats);
        Assert.Equal(Enumerable.Range(0, Count), fromBus);
        Assert.False(overlapped);
    }

    [Fact(Timeout = 60_000)]
    public async Task A_handler_that_throws_does_not_stop_the_messages_behind_it()
    {
        await using var broker = await TestBroker.StartAsync();
        broker.ExpectErrors();
        await using var client = broker.Bus.CreateClient(new BusClientOptions { Name = "faulty" });
        var handled = new ConcurrentQueue<int>();
        using var sub = client.Subscribe("jobs", null, (in BusMessage m) =>
        {
            var n = BinaryPrimitives.ReadInt32BigEndian(m.Payload.FirstSpan);
            handled.Enqueue(n);
            if (n % 2 == 0)
            {
                throw new InvalidOperationException("job " + n + " failed");
            }
        });

        for (var i = 0; i < 10; i++)
        {
            client.Publish("jobs", Number(i));
        }

        Assert.True(await Eventually.TrueAsync(() => handled.Count == 10, Wait));
        Assert.Contains(broker.Logs.Errors, e => e.Message.Contains("handler for jobs failed", StringComparison.Ordinal));
    }

    internal static byte[] Number(int value)
    {
        var bytes = new byte[4];
        BinaryPrimitives.WriteInt32BigEndian(bytes, value);
        return bytes;
    }

    private static void PublishMany(IBusClient client, string subject, int count)
    {
        var subjectBytes = Encoding.UTF8.GetBytes(subject);
        for (var i = 0; i < count; i++)
        {
            client.Publish(subjectBytes, default, ReadOnlySequence<byte>.Empty, new ReadOnlySequence<byte>(Number(i)));
        }
    }
}
