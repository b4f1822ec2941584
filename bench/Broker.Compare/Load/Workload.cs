using System.Diagnostics;

namespace Broker.Compare.Load;

/// <summary>
/// One kind of load, run identically against any NATS server. <c>count</c> is the workload's unit of work
/// (messages per publisher set, requests per client, writes); the harness scales it so a run lasts long enough.
/// </summary>
internal interface IWorkload
{
    /// <summary>The count the first calibration run uses (a fraction of a second on a fast server).</summary>
    long CalibrationCount { get; }

    /// <summary>The count of a smoke run (only proves the workload works).</summary>
    long SmokeCount { get; }

    /// <summary>Whether the row reports request latency percentiles.</summary>
    bool HasLatency => false;

    /// <summary>
    /// Runs once against the server reached through <paramref name="server"/> (its address and transport) on
    /// subjects under <paramref name="subject"/>.
    /// </summary>
    Measurement Run(NatsEndpoint server, long count, string subject, CancellationToken cancellationToken);
}

/// <summary>
/// What one run measured: units completed, payload bytes moved, wall time, latency when measured, and the CPU time
/// the server process used meanwhile (set by the harness, which knows the process).
/// </summary>
internal sealed record Measurement(long Messages, long PayloadBytes, TimeSpan Elapsed, LatencySummary? Latency = null)
{
    public double MessagesPerSecond => Messages / Elapsed.TotalSeconds;

    public double MegabytesPerSecond => PayloadBytes / Elapsed.TotalSeconds / 1_000_000;

    /// <summary>User + system CPU time of the server process during the run, when known.</summary>
    public TimeSpan? ServerCpu { get; init; }

    /// <summary>Server CPU nanoseconds per unit: much less sensitive than msgs/s to other load on the machine.</summary>
    public double? ServerCpuNanosecondsPerMessage => ServerCpu is { } cpu ? cpu.TotalNanoseconds / Messages : null;
}

/// <summary>Request round-trip percentiles of one run, in microseconds.</summary>
internal sealed record LatencySummary(double P50Microseconds, double P99Microseconds)
{
    /// <summary>Percentiles of round trips given in <see cref="Stopwatch"/> ticks (sorts the array).</summary>
    public static LatencySummary FromTicks(long[] ticks)
    {
        ArgumentNullException.ThrowIfNull(ticks);
        Array.Sort(ticks);
        return new LatencySummary(Microseconds(Percentile(ticks, 0.50)), Microseconds(Percentile(ticks, 0.99)));
    }

    private static long Percentile(long[] sorted, double quantile)
        => sorted.Length == 0 ? 0 : sorted[Math.Min(sorted.Length - 1, (int)Math.Ceiling(quantile * sorted.Length) - 1)];

    private static double Microseconds(long ticks) => ticks * 1_000_000.0 / Stopwatch.Frequency;
}

/// <summary>Helpers shared by the workloads.</summary>
internal static class WorkloadTiming
{
    /// <summary>The longest a single run may take before it is failed.</summary>
    public static readonly TimeSpan RunTimeout = TimeSpan.FromMinutes(2);

    public static TimeSpan Between(long startTimestamp, long endTimestamp) => Stopwatch.GetElapsedTime(startTimestamp, endTimestamp);

    /// <summary>Splits <paramref name="total"/> into <paramref name="parts"/> shares that differ by at most one.</summary>
    public static long Share(long total, int parts, int index) => (total / parts) + (index < total % parts ? 1 : 0);
}
