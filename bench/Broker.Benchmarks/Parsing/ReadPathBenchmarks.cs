using System.Text;
using BenchmarkDotNet.Attributes;
using Broker.Benchmarks.Embedded;

namespace Broker.Benchmarks.Parsing;

/// <summary>
/// A NATS connection's whole read path for one read of <see cref="Batch"/> PUBs, as the socket's receive loop hands
/// it over: the input pipe's flush runs the client's read loop inline (read, per-read limits, parse, publish
/// checks, match, per-batch statistics, the batch's flush), on the benchmark thread. <c>Publish128NoSubscribers</c>
/// is the publish-only row's server work (nobody subscribes: match and count); <c>Publish16ToOne</c> the pub/sub
/// row's, with the subscriber's output drained. Steady state allocates nothing.
/// </summary>
[MemoryDiagnoser]
public class ReadPathBenchmarks
{
    /// <summary>PUBs in one read (NATS.Client.Core hands the socket about 60 of 128 B at a time).</summary>
    public const int Batch = 64;

    private EmbeddedBroker broker = null!;
    private InMemoryConnection publisher = null!;
    private byte[] pubs128 = [];
    private byte[] pubs16 = [];

    [GlobalSetup]
    public void Setup()
    {
        broker = new EmbeddedBroker();
        broker.Connect(headers: true, "SUB bench.read.one 1");
        publisher = broker.Connect(headers: true).Connection;
        pubs128 = Repeat("bench.read.none", 128);
        pubs16 = Repeat("bench.read.one", 16);
    }

    [GlobalCleanup]
    public void Cleanup() => broker.DisposeAsync().AsTask().GetAwaiter().GetResult();

    [Benchmark(OperationsPerInvoke = Batch)]
    public long Publish128NoSubscribers() => Read(pubs128);

    [Benchmark(OperationsPerInvoke = Batch)]
    public long Publish16ToOne() => Read(pubs16);

    private long Read(byte[] bytes)
    {
        var input = publisher.PeerInput;
        bytes.CopyTo(input.GetSpan(bytes.Length));
        input.Advance(bytes.Length);

        // The read loop parses inline in this flush and has consumed the read when it returns.
        var flush = input.FlushAsync();
        if (!flush.IsCompleted)
        {
            throw new InvalidOperationException("The read loop did not consume the read inline.");
        }

        return broker.DrainAll();
    }

    private static byte[] Repeat(string subject, int size)
        => Encoding.ASCII.GetBytes(string.Concat(Enumerable.Repeat($"PUB {subject} {size}\r\n{new string('x', size)}\r\n", Batch)));
}
