using System.Buffers;
using BenchmarkDotNet.Attributes;
using Broker.Benchmarks.Embedded;
using Broker.Core;
using Broker.Core.Auth;

namespace Broker.Benchmarks.Delivery;

/// <summary>
/// The publish path of an account with subject mappings: the producer maps each 128-byte message's subject into its
/// own buffer, then routes it as <see cref="FanOutBenchmarks"/> does to one subscriber of the destination. One
/// operation is one published message. Steady state allocates nothing, weighted choice included; the cost of the
/// mapping is the difference from <c>FanOutBenchmarks.Publish128(Subscribers=1)</c>, whose account has none.
/// </summary>
[MemoryDiagnoser]
public class MappingBenchmarks
{
    private static readonly byte[] Literal = "bench.in"u8.ToArray();
    private static readonly byte[] Wildcard = "wild.123.in"u8.ToArray();
    private static readonly byte[] Partitioned = "orders.customer-4711"u8.ToArray();
    private static readonly byte[] Weighted = "canary"u8.ToArray();

    private EmbeddedBroker broker = null!;
    private ReadOnlySequence<byte> payload;

    [GlobalSetup]
    public void Setup()
    {
        var options = new BrokerOptions
        {
            Mappings =
            [
                Mapping("bench.in", ("bench.out", 100)),
                Mapping("wild.*.in", ("wild.out.$1", 100)),
                Mapping("orders.*", ("orders.{{partition(8,1)}}.$1", 100)),
                Mapping("canary", ("canary.v1", 90), ("canary.v2", 10)),
            ],
        };
        broker = new EmbeddedBroker(options);
        broker.Connect(headers: false, "SUB bench.out 1", "SUB wild.out.* 2", "SUB orders.*.* 3", "SUB canary.* 4");
        payload = new ReadOnlySequence<byte>(new byte[128]);
    }

    [GlobalCleanup]
    public void Cleanup() => broker.DisposeAsync().AsTask().GetAwaiter().GetResult();

    /// <summary>A literal source to a literal destination.</summary>
    [Benchmark(OperationsPerInvoke = FanOutBenchmarks.Batch)]
    public long Literal128() => PublishBatch(Literal);

    /// <summary>A wildcard source with its token moved (<c>$1</c>).</summary>
    [Benchmark(OperationsPerInvoke = FanOutBenchmarks.Batch)]
    public long Wildcard128() => PublishBatch(Wildcard);

    /// <summary>A partition (FNV-1a of the token) written in decimal.</summary>
    [Benchmark(OperationsPerInvoke = FanOutBenchmarks.Batch)]
    public long Partition128() => PublishBatch(Partitioned);

    /// <summary>Two weighted destinations, one drawn per publish.</summary>
    [Benchmark(OperationsPerInvoke = FanOutBenchmarks.Batch)]
    public long Weighted128() => PublishBatch(Weighted);

    private static MappingOptions Mapping(string source, params (string Subject, int Weight)[] destinations) => new()
    {
        Source = source,
        Destinations = [.. destinations.Select(d => new MappingDestinationOptions { Subject = d.Subject, Weight = d.Weight })],
    };

    private long PublishBatch(byte[] subject)
    {
        var publisher = broker.Publisher;
        for (var i = 0; i < FanOutBenchmarks.Batch; i++)
        {
            publisher.Publish(subject, default, ReadOnlySequence<byte>.Empty, payload);
        }

        publisher.FlushPending();
        return broker.DrainAll();
    }
}
