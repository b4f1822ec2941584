using System.Buffers;
using BenchmarkDotNet.Attributes;
using Broker.Benchmarks.Embedded;

namespace Broker.Benchmarks.Delivery;

/// <summary>
/// The publish path end to end inside the broker: a producer routes a 128-byte message (match, per-subscriber
/// MSG formatting into the output pipe, deferred flush once per batch) to real <c>NatsClient</c>s over in-memory
/// connections, whose output the benchmark drains as a socket send loop would. One operation is one published
/// message, delivered to every subscriber (or to one member of the queue group). Steady state allocates nothing.
/// </summary>
[MemoryDiagnoser]
public class FanOutBenchmarks
{
    /// <summary>Messages published between two flushes: one simulated read of the producer's socket.</summary>
    public const int Batch = 64;

    private static readonly byte[] Subject = "bench.fanout"u8.ToArray();
    private static readonly byte[] QueueSubject = "bench.work"u8.ToArray();

    private EmbeddedBroker broker = null!;
    private ReadOnlySequence<byte> payload;

    [Params(1, 4, 16)]
    public int Subscribers { get; set; }

    [GlobalSetup]
    public void Setup()
    {
        broker = new EmbeddedBroker();
        for (var i = 0; i < Subscribers; i++)
        {
            broker.Connect(headers: false, "SUB bench.fanout 1", "SUB bench.work workers 2");
        }

        payload = new ReadOnlySequence<byte>(new byte[128]);
    }

    [GlobalCleanup]
    public void Cleanup() => broker.DisposeAsync().AsTask().GetAwaiter().GetResult();

    /// <summary>Every subscriber receives each message.</summary>
    [Benchmark(OperationsPerInvoke = Batch)]
    public long Publish128() => PublishBatch(Subject);

    /// <summary>One member of a queue group (of <see cref="Subscribers"/> members) receives each message.</summary>
    [Benchmark(OperationsPerInvoke = Batch)]
    public long PublishToQueueGroup128() => PublishBatch(QueueSubject);

    private long PublishBatch(byte[] subject)
    {
        var publisher = broker.Publisher;
        for (var i = 0; i < Batch; i++)
        {
            publisher.Publish(subject, default, ReadOnlySequence<byte>.Empty, payload);
        }

        publisher.FlushPending();
        return broker.DrainAll();
    }
}
