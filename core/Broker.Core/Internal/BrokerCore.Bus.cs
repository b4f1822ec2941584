namespace Broker.Core.Internal;

/// <summary>Where the handler queues of in-process clients are drained.</summary>
internal sealed partial class BrokerCore
{
    private Action<IThreadPoolWorkItem> drainScheduler = static item => ThreadPool.UnsafeQueueUserWorkItem(item, preferLocal: false);

    /// <summary>
    /// Runs a drain of an in-process client's handler queue: on the thread pool. Benchmarks replace it to run drains on
    /// their own thread, where allocations are measured.
    /// </summary>
    public Action<IThreadPoolWorkItem> DrainScheduler
    {
        get => drainScheduler;
        set => drainScheduler = value ?? throw new ArgumentNullException(nameof(value));
    }

    public void ScheduleDrain(IThreadPoolWorkItem drain) => drainScheduler(drain);
}
