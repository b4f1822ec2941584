namespace Broker.Core.Internal.Clients;

/// <summary>
/// How long a producer waits for consumers that fell behind (nats-server's fast-producer stall, <c>stalledWait</c>):
/// rather than letting a briefly descheduled subscriber overflow max_pending and be cut off, the producer feeding
/// it pauses, at most <see cref="TotalPerRead"/> per read of its own input. How often depends on the consumer: one
/// that took bytes within <see cref="Reading"/> paces the producer message by message (it is slow, not stopped);
/// one that paused longer is waited for after every eighth of max_pending delivered to it; one that took nothing for
/// <see cref="Grace"/> not at all.
/// </summary>
/// <remarks>
/// The last two steps are ours, not nats-server's: a consumer that reads nothing for that long is stuck, and stalling
/// producers for it would let one stopped client throttle every publisher on its subjects (nats-server 2.9.10, which
/// stalls 100 ms to 1 s per delivery, kept a third of the fast subscribers' throughput or less in the storm of
/// docs/reliability.md; its later versions still stall up to 10 ms per read until the write deadline). Past the grace the stuck consumer's buffer fills to max_pending and it
/// is closed as a slow consumer, the documented rule, while the others go on at full speed.
/// </remarks>
internal static class StallPolicy
{
    /// <summary>
    /// How long a consumer that fell behind (three quarters of max_pending waiting) may read nothing and still have
    /// producers stall for it (after every eighth of max_pending delivered to it). Long enough for a reader descheduled on a busy machine, short beside the seconds a
    /// stopped one would otherwise cost everyone.
    /// </summary>
    public static readonly TimeSpan Grace = TimeSpan.FromMilliseconds(250);

    /// <summary>A far-behind consumer that took bytes this recently is reading: producers stall for it message by message.</summary>
    public static readonly TimeSpan Reading = TimeSpan.FromMilliseconds(100);

    /// <summary>The most a producer stalls for one read of its input (nats-server <c>stallTotalAllowed</c>).</summary>
    public static readonly TimeSpan TotalPerRead = TimeSpan.FromMilliseconds(10);

    /// <summary>Waits for the stalled flushes to complete, at most <see cref="TotalPerRead"/>; then forgets them.</summary>
    public static async ValueTask WaitAsync(List<Task> stalls, CancellationToken cancellationToken = default)
    {
        var all = stalls.Count == 1 ? stalls[0] : Task.WhenAll(stalls);
        await Task.WhenAny(all, Task.Delay(TotalPerRead, cancellationToken)).ConfigureAwait(false);
        stalls.Clear();
    }
}
