namespace Broker.Core.Internal.Clients;

/// <summary>
/// How long a producer waits for consumers that fell behind (nats-server's fast-producer stall, <c>stalledWait</c>):
/// rather than letting a briefly descheduled subscriber overflow max_pending and be cut off, the producer feeding
/// it pauses a few milliseconds, at most <see cref="TotalPerRead"/> per read of its own input.
/// </summary>
internal static class StallPolicy
{
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
