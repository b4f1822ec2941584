using Broker.Abstractions;

namespace Broker.Storage.MemStore.Internal;

/// <summary>
/// <c>max_age</c>: a timer due when the first message expires removes every expired message and re-arms for the next
/// (nats-server <c>expireMsgs</c>).
/// </summary>
internal sealed partial class MemoryStreamStore
{
    private Timer? ageTimer;

    /// <summary>Arms, re-arms or stops the age timer for the current first message. Lock held.</summary>
    private void ScheduleAgeCheck()
    {
        var maxAge = config.MaxAge;
        if (maxAge <= TimeSpan.Zero || closed)
        {
            ageTimer?.Dispose();
            ageTimer = null;
            return;
        }

        // Until the first message expires; the whole age when the stream is empty (nothing to expire before then).
        var due = maxAge;
        if (messageCount > 0)
        {
            var expiresAt = firstTimestamp + (maxAge.Ticks * 100);
            due = TimeSpan.FromTicks(Math.Max(0, (expiresAt - Now()) / 100)) + TimeSpan.FromMilliseconds(1);
        }

        ageTimer ??= new Timer(static state => ((MemoryStreamStore)state!).ExpireMessages(), this, Timeout.Infinite, Timeout.Infinite);
        ageTimer.Change(due, Timeout.InfiniteTimeSpan);
    }

    private void ExpireMessages()
    {
        var removed = RemovalBuffer.Rent();
        lock (gate)
        {
            if (closed || config.MaxAge <= TimeSpan.Zero)
            {
                RemovalBuffer.Return(removed);
                return;
            }

            var cutoff = Now() - (config.MaxAge.Ticks * 100);
            while (messageCount > 0 && messages.TryGetValue(firstSequence, out var entry) && entry.Timestamp <= cutoff)
            {
                RemoveLocked(firstSequence, secureErase: false, removed);
            }

            ScheduleAgeCheck();
        }

        ReportRemovals(removed);
    }
}
