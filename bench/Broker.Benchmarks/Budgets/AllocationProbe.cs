using System.Diagnostics;

namespace Broker.Benchmarks.Budgets;

/// <summary>
/// Measures the bytes a benchmark allocates per operation on the calling thread, by running its method in a loop
/// and reading <see cref="GC.GetAllocatedBytesForCurrentThread"/> around it: deterministic, and a few hundred
/// milliseconds per case instead of a BenchmarkDotNet run. The smallest of several rounds is reported, so a
/// first-call cost (tiered JIT, a lazily created buffer) does not count as steady state. Rounds are short and many:
/// a benchmark whose steady state includes a rare event (a file store rolls to a new block file every ~45,000 appends,
/// opening a handle) must find rounds without one even on a machine where the operation is ten times faster, while an
/// allocation made on every operation still shows in every round.
/// </summary>
internal static class AllocationProbe
{
    private const int Rounds = 24;
    private static readonly TimeSpan RoundTime = TimeSpan.FromMilliseconds(5);

    /// <summary>Bytes per operation of <paramref name="benchmark"/> in steady state.</summary>
    public static double Measure(BenchmarkCase benchmark)
    {
        ArgumentNullException.ThrowIfNull(benchmark);
        var instance = benchmark.CreateAndSetUp();
        try
        {
            var invoke = benchmark.CreateInvoker(instance);

            // Warm up, and find how many invocations fill one round.
            var invocations = 1;
            var watch = Stopwatch.StartNew();
            while (true)
            {
                watch.Restart();
                for (var i = 0; i < invocations; i++)
                {
                    invoke();
                }

                if (watch.Elapsed >= RoundTime || invocations >= 1 << 20)
                {
                    break;
                }

                invocations *= 2;
            }

            var best = double.MaxValue;
            for (var round = 0; round < Rounds; round++)
            {
                var before = GC.GetAllocatedBytesForCurrentThread();
                for (var i = 0; i < invocations; i++)
                {
                    invoke();
                }

                var allocated = GC.GetAllocatedBytesForCurrentThread() - before;
                best = Math.Min(best, (double)allocated / ((long)invocations * benchmark.OperationsPerInvoke));
            }

            return best;
        }
        finally
        {
            benchmark.CleanUp(instance);
        }
    }
}
