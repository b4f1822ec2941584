using BenchmarkDotNet.Running;
using Broker.Benchmarks.Budgets;

namespace Broker.Benchmarks;

/// <summary>
/// <c>dotnet run -c Release --project bench/Broker.Benchmarks -- --filter '*'</c> runs the micro-benchmarks with
/// BenchmarkDotNet; <c>-- --allocations</c> prints bytes/op of every case against its budget without BenchmarkDotNet.
/// </summary>
public static class Program
{
    public static int Main(string[] args)
    {
        ArgumentNullException.ThrowIfNull(args);
        if (args.Contains("--allocations"))
        {
            return AllocationReport.Run(Console.Out);
        }

        // The in-process toolchain: the default one generates and restores a project per benchmark, which needs
        // packages from the network; in-process runs what was just built.
        if (!args.Contains("--inProcess") && !args.Contains("-i"))
        {
            args = [.. args, "--inProcess"];
        }

        var summaries = BenchmarkSwitcher.FromAssembly(typeof(Program).Assembly).Run(args);
        return summaries.Any(s => s.HasCriticalValidationErrors) ? 1 : 0;
    }
}
