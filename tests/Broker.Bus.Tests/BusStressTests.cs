using System.Buffers;
using System.Buffers.Binary;
using System.Collections.Concurrent;
using System.Text;
using Broker.Abstractions;
using NATS.Client.Core;

namespace Broker.Bus.Tests;

/// <summary>
/// The bus under load from every side at once: several bus clients whose handlers forward messages through their own
/// and each other's clients and make requests through their own and each other's clients, blocking on some (answered
/// by service clients) and awaiting others (answered by a handler of the requesting client itself), while several
/// threads and a NATS connection publish. Bounded in time; every message must arrive exactly once, every request must
/// be answered, and each producer's messages must keep their order.
/// </summary>
/// <remarks>
/// The requests a handler blocks on go to clients whose handlers never block: handlers of one client run one at a
/// time, so two handlers blocked on each other's client would wait for their timeouts (docs/plugins.md).
/// </remarks>
public sealed class BusStressTests
{
    private const int Nodes = 4;
    private const int PerProducer = 2_000;
    private const int Hops = 6;
    private static readonly TimeSpan Deadline = TimeSpan.FromSeconds(90);

    [Fact(Timeout = 180_000)]
    public async Task Handlers_publishing_and_requesting_through_their_own_and_each_others_clients_lose_nothing()
    {
        await using var broker = await TestBroker.StartAsync();
        var nodes = new IBusClient[Nodes];
        var services = new IBusClient[Nodes];
        for (var i = 0; i < Nodes; i++)
        {
            nodes[i] = broker.Bus.CreateClient(new BusClientOptions { Name = "node-" + i });
            services[i] = broker.Bus.CreateClient(new BusClientOptions { Name = "service-" + i });
        }

        var failures = new ConcurrentQueue<string>();
        var requestsIssued = 0;
        var requestsAnswered = 0;
        var asyncRequests = new ConcurrentQueue<Task>();
        var subscriptions = new List<IBusSubscription>();
        for (var i = 0; i < Nodes; i++)
        {
            var index = i;
            var self = nodes[i];
            var next = nodes[(i + 1) % Nodes];
            var service = services[i];

            // Services answering through their own client: one on a client of its own, one on the node itself.
            subscriptions.Add(service.Subscribe("svc." + index, null, (in BusMessage m) => service.Publish(m.ReplyTo, default, ReadOnlySequence<byte>.Empty, m.Payload)));
            subscriptions.Add(self.Subscribe("own." + index, null, (in BusMessage m) => self.Publish(m.ReplyTo, default, ReadOnlySequence<byte>.Empty, m.Payload)));

            // A hop: forwards through its own client or the next node's; now and then it blocks on a request to a
            // service, made through its own client or the next node's, or awaits a request its own client answers.
            subscriptions.Add(self.Subscribe("hop." + index, null, (in BusMessage m) =>
            {
                var (origin, seq, hops) = Read(m.Payload);
                if (seq % 16 is 0 or 4)
                {
                    Interlocked.Increment(ref requestsIssued);
                    var question = Encode(origin, seq, hops);
                    var through = seq % 16 == 0 ? self : next;
                    var reply = through.RequestAsync("svc." + ((index + 2) % Nodes), question, Deadline).GetAwaiter().GetResult();
                    if (reply.Payload.Span.SequenceEqual(question))
                    {
                        Interlocked.Increment(ref requestsAnswered);
                    }
                    else
                    {
                        failures.Enqueue($"wrong answer to {origin}/{seq}");
                    }
                }
                else if (seq % 16 == 8)
                {
                    var question = Encode(origin, seq, hops);
                    asyncRequests.Enqueue(self.RequestAsync("own." + index, question, Deadline));
                }

                if (hops > 0)
                {
                    var through = seq % 2 == 0 ? self : next;
                    through.Publish("hop." + ((index + 1) % Nodes), Encode(origin, seq, hops - 1));
                }
                else
                {
                    self.Publish("sink", Encode(origin, seq, 0));
                }
            }));
        }

        // Where every message ends: a bus client and a NATS connection.
        await using var sinkClient = broker.Bus.CreateClient(new BusClientOptions { Name = "sink" });
        var arrived = new ConcurrentDictionary<(int Origin, int Seq), int>();
        using var sink = sinkClient.Subscribe("sink", null, (in BusMessage m) =>
        {
            var (origin, seq, _) = Read(m.Payload);
            arrived.AddOrUpdate((origin, seq), 1, (_, n) => n + 1);
        });

        // Each producer's first hop, observed in order.
        await using var observer = broker.Bus.CreateClient(new BusClientOptions { Name = "observer" });
        var firstHop = new List<int>[Nodes + 1];
        for (var i = 0; i < firstHop.Length; i++)
        {
            firstHop[i] = [];
        }

        using var watch = observer.Subscribe("hop.0", null, (in BusMessage m) =>
        {
            var (origin, seq, hops) = Read(m.Payload);
            if (hops == Hops)
            {
                firstHop[origin].Add(seq);
            }
        });

        await using var nats = new NatsConnection(new NatsOpts { Url = broker.Url, Name = "stress" });
        await using var natsSink = await nats.SubscribeCoreAsync<byte[]>("sink");
        var natsReceived = 0;
        var natsCounting = Task.Run(async () =>
        {
            await foreach (var _ in natsSink.Msgs.ReadAllAsync())
            {
                Interlocked.Increment(ref natsReceived);
            }
        });
        await nats.PingAsync();

        // Producers: one thread per node publishing through that node's client, and the NATS connection.
        var producers = Enumerable.Range(0, Nodes).Select(origin => Task.Factory.StartNew(
            () =>
            {
                for (var seq = 0; seq < PerProducer; seq++)
                {
                    nodes[origin].Publish("hop.0", Encode(origin, seq, Hops));
                }
            },
            TaskCreationOptions.LongRunning)).ToList();
        producers.Add(Task.Run(async () =>
        {
            for (var seq = 0; seq < PerProducer; seq++)
            {
                await nats.PublishAsync("hop.0", Encode(Nodes, seq, Hops));
            }

            await nats.PingAsync();
        }));
        await Task.WhenAll(producers).WaitAsync(Deadline);

        const int Total = (Nodes + 1) * PerProducer;
        Assert.True(
            await Eventually.TrueAsync(() => arrived.Count == Total && Volatile.Read(ref natsReceived) == Total, Deadline),
            $"sink: {arrived.Count} of {Total}, NATS sink: {natsReceived} of {Total}");
        await Task.WhenAll(asyncRequests).WaitAsync(Deadline);

        Assert.Empty(failures);
        Assert.All(arrived, pair => Assert.Equal(1, pair.Value));
        Assert.True(requestsIssued > 0);
        Assert.Equal(requestsIssued, requestsAnswered);
        Assert.All(asyncRequests, request => Assert.True(request.IsCompletedSuccessfully));
        Assert.True(await Eventually.TrueAsync(() => firstHop.All(seen => seen.Count == PerProducer), Deadline));
        Assert.All(firstHop, seen => Assert.Equal(Enumerable.Range(0, PerProducer), seen));

        foreach (var subscription in subscriptions)
        {
            subscription.Dispose();
        }

        foreach (var node in nodes.Concat(services))
        {
            await node.DisposeAsync();
        }

        await natsSink.UnsubscribeAsync();
        await natsCounting;
        Assert.Equal(Total, natsReceived);
    }

    private static byte[] Encode(int origin, int seq, int hops)
    {
        var bytes = new byte[12];
        BinaryPrimitives.WriteInt32BigEndian(bytes, origin);
        BinaryPrimitives.WriteInt32BigEndian(bytes.AsSpan(4), seq);
        BinaryPrimitives.WriteInt32BigEndian(bytes.AsSpan(8), hops);
        return bytes;
    }

    private static (int Origin, int Seq, int Hops) Read(in ReadOnlySequence<byte> payload)
    {
        Span<byte> bytes = stackalloc byte[12];
        payload.CopyTo(bytes);
        return (BinaryPrimitives.ReadInt32BigEndian(bytes), BinaryPrimitives.ReadInt32BigEndian(bytes[4..]), BinaryPrimitives.ReadInt32BigEndian(bytes[8..]));
    }
}
