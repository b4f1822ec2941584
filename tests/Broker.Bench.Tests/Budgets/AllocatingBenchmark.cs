using BenchmarkDotNet.Attributes;

namespace Broker.Bench.Tests.Budgets;

/// <summary>A benchmark that allocates a known amount per operation, to prove the probe would catch a regression.</summary>
public class AllocatingBenchmark
{
    private const int Batch = 32;
    private byte[]? last;

    [Params(16)]
    public int Size { get; set; }

    public bool Prepared { get; private set; }

    [GlobalSetup]
    public void Setup() => Prepared = true;

    [Benchmark(OperationsPerInvoke = Batch)]
    public long AllocateOneSmallArray()
    {
        if (!Prepared)
        {
            throw new InvalidOperationException("GlobalSetup did not run.");
        }

        long total = 0;
        for (var i = 0; i < Batch; i++)
        {
            last = new byte[Size];
            total += last.Length;
        }

        return total;
    }
}
