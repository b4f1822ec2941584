using System.Diagnostics;

namespace Broker.Core.Internal.Monitoring.Metrics;

/// <summary>
/// The process's CPU and memory use for /varz and the metrics. CPU percent is measured over windows of at least one
/// second, like nats-server's <c>pse</c> sampler (100 means one core fully busy), and rounded to one decimal.
/// </summary>
internal sealed class ProcessUsage
{
    private static readonly TimeSpan Window = TimeSpan.FromSeconds(1);

    private readonly Lock sync = new();
    private long windowStart = Stopwatch.GetTimestamp();
    private TimeSpan windowStartCpu = Environment.CpuUsage.TotalTime;
    private double percent;
    private bool measured;

    /// <summary>Resident set size in bytes (/varz <c>mem</c>).</summary>
    public static long ResidentBytes => Environment.WorkingSet;

    /// <summary>CPU time the process has used, user and kernel.</summary>
    public static TimeSpan CpuTime => Environment.CpuUsage.TotalTime;

    /// <summary>CPU use in percent of one core over the last completed window (/varz <c>cpu</c>).</summary>
    public double CpuPercent()
    {
        lock (sync)
        {
            var elapsed = Stopwatch.GetElapsedTime(windowStart);
            if (elapsed >= Window || (!measured && elapsed > TimeSpan.Zero))
            {
                var cpu = CpuTime;
                percent = Math.Round((cpu - windowStartCpu) / elapsed * 100, 1);
                measured = true;
                windowStart = Stopwatch.GetTimestamp();
                windowStartCpu = cpu;
            }

            return percent;
        }
    }
}
