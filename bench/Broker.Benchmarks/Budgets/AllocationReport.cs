using System.Globalization;

namespace Broker.Benchmarks.Budgets;

/// <summary>
/// <c>--allocations</c>: measures every case with <see cref="AllocationProbe"/> and prints a Markdown table against
/// the budgets (the table docs/benchmarks.md records). Exit code 1 when a case is over budget or has none.
/// </summary>
internal static class AllocationReport
{
    public static int Run(TextWriter output)
    {
        var budgets = AllocationBudgets.Load();
        var failures = 0;
        output.WriteLine("| Benchmark | Bytes/op measured | Budget |");
        output.WriteLine("|---|---:|---:|");
        foreach (var benchmark in BenchmarkCase.Discover(typeof(AllocationReport).Assembly))
        {
            var measured = AllocationProbe.Measure(benchmark);
            var hasBudget = budgets.TryGetValue(benchmark.Id, out var budget);
            var verdict = !hasBudget ? " (no budget)" : measured > budget ? " (OVER)" : string.Empty;
            if (verdict.Length > 0)
            {
                failures++;
            }

            output.WriteLine(string.Create(CultureInfo.InvariantCulture, $"| {benchmark.Id} | {measured:0.#}{verdict} | {(hasBudget ? budget.ToString(CultureInfo.InvariantCulture) : "-")} |"));
        }

        return failures == 0 ? 0 : 1;
    }
}
