using Broker.Core.Internal;

namespace Broker.Benchmarks.Embedded;

/// <summary>
/// Runs in-process clients' handler drains on the benchmark thread instead of the thread pool: the drains queue here
/// when a producer's batch ends, and <see cref="Run"/> executes them, so their work and their allocations are measured
/// with the benchmark's.
/// </summary>
internal sealed class InlineDrains
{
    private readonly Queue<IThreadPoolWorkItem> pending = new();

    public InlineDrains(BrokerCore core)
    {
        core.DrainScheduler = pending.Enqueue;
    }

    /// <summary>Runs every scheduled drain, including drains those schedule; returns how many ran.</summary>
    public int Run()
    {
        var ran = 0;
        while (pending.TryDequeue(out var drain))
        {
            drain.Execute();
            ran++;
        }

        return ran;
    }
}
