using System.Buffers;
using System.Text;
using BenchmarkDotNet.Attributes;
using Broker.Abstractions;
using Broker.Benchmarks.Embedded;
using Broker.Core.Internal;
using Broker.JetStream;
using Broker.JetStream.Internal;
using Broker.Storage.MemStore;
using Microsoft.Extensions.Logging.Abstractions;

namespace Broker.Benchmarks.JetStream;

/// <summary>
/// The JetStream publish path inside the embedded broker: a producer publishes a 16-byte message with a reply subject
/// to a memory stream's subject; the stream's bus subscription checks it, appends it to the store and publishes the
/// pub ack, which a real <c>NatsClient</c> subscribed to the reply subject receives. One operation is one message
/// stored and acknowledged. Steady state (the stream at its <c>max_msgs</c>) allocates nothing. <c>Publish16RePublish</c>
/// is the same into a stream with <c>republish</c>, whose copy of each message (with its five headers) the same
/// connection receives too: allocates nothing either.
/// </summary>
[MemoryDiagnoser]
public class JetStreamPublishBenchmarks
{
    /// <summary>Messages published between two flushes: one simulated read of the producer's socket.</summary>
    public const int Batch = 64;

    private static readonly byte[] Subject = "bench.js.x"u8.ToArray();
    private static readonly byte[] Reply = "bench.acks.1"u8.ToArray();
    private static readonly byte[] RePublishSubject = "bench.rp.x"u8.ToArray();

    private EmbeddedBroker broker = null!;
    private InlineDrains drains = null!;
    private JetStreamEngine engine = null!;
    private ReadOnlySequence<byte> payload;

    [GlobalSetup]
    public void Setup()
    {
        broker = new EmbeddedBroker();
        var bus = new MessageBus(broker.Core);
        engine = new JetStreamEngine(
            new JetStreamOptions { StoreDirectory = Path.Combine(Path.GetTempPath(), "bench-js-" + Guid.NewGuid().ToString("N")) },
            bus,
            [new MemoryStoreProvider()],
            bus,
            NullLoggerFactory.Instance);
        engine.StartAsync(CancellationToken.None).GetAwaiter().GetResult();
        var client = bus.CreateClient();
        try
        {
            CreateStream(client, "BENCH", """{"name":"BENCH","subjects":["bench.js.>"],"storage":"memory","max_msgs":100000}""");
            CreateStream(client, "BENCHRP", """{"name":"BENCHRP","subjects":["bench.rp.>"],"storage":"memory","max_msgs":100000,"republish":{"dest":"bench.out.>"}}""");
        }
        finally
        {
            client.DisposeAsync().AsTask().GetAwaiter().GetResult();
        }

        broker.Connect(headers: true, "SUB bench.acks.* 1", "SUB bench.out.> 2");

        // The stream's ingest handler runs on this thread when the benchmark runs the drains, not on the thread pool.
        drains = new InlineDrains(broker.Core);
        payload = new ReadOnlySequence<byte>(new byte[16]);

        // Fill to the limit, so every measured append also removes the oldest message.
        for (var i = 0; i < 100_000 / Batch + 1; i++)
        {
            PublishBatch(Subject);
            PublishBatch(RePublishSubject);
        }
    }

    private static void CreateStream(IBusClient client, string name, string config)
    {
        var reply = client.RequestAsync("$JS.API.STREAM.CREATE." + name, Encoding.UTF8.GetBytes(config), TimeSpan.FromSeconds(10)).GetAwaiter().GetResult();
        if (Encoding.UTF8.GetString(reply.Payload.Span).Contains("\"error\"", StringComparison.Ordinal))
        {
            throw new InvalidOperationException(Encoding.UTF8.GetString(reply.Payload.Span));
        }
    }

    [GlobalCleanup]
    public void Cleanup()
    {
        engine.DisposeAsync().AsTask().GetAwaiter().GetResult();
        broker.DisposeAsync().AsTask().GetAwaiter().GetResult();
    }

    [Benchmark(OperationsPerInvoke = Batch)]
    public long Publish16() => PublishBatch(Subject);

    [Benchmark(OperationsPerInvoke = Batch)]
    public long Publish16RePublish() => PublishBatch(RePublishSubject);

    private long PublishBatch(byte[] subject)
    {
        var publisher = broker.Publisher;
        for (var i = 0; i < Batch; i++)
        {
            publisher.Publish(subject, Reply, ReadOnlySequence<byte>.Empty, payload);
        }

        publisher.FlushPending();
        drains.Run();
        return broker.DrainAll();
    }
}
