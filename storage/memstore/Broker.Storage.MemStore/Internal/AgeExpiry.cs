namespace Broker.Storage.MemStore.Internal;

/// <summary>
/// <c>max_age</c> of a memory stream (nats-server memstore's <c>ageChk</c> and <c>expireMsgs</c>): a timer due when the
/// first message expires; when it fires, the store removes every expired message (<see cref="RemoveExpired"/>) and
/// re-arms it for the next. Not thread-safe: the store arms it and removes under its lock; the timer calls the store,
/// which takes the lock.
/// </summary>
internal sealed class AgeExpiry : IDisposable
{
    private readonly MessageLog log;
    private readonly SubjectIndex subjects;
    private readonly Action expire;
    private Timer? timer;

    /// <param name="log">The messages, whose first timestamp says when the next one expires.</param>
    /// <param name="subjects">The subjects, unlinked as messages expire.</param>
    /// <param name="expire">Called on a timer thread when the first message is due: takes the store's lock and expires.</param>
    public AgeExpiry(MessageLog log, SubjectIndex subjects, Action expire)
    {
        this.log = log;
        this.subjects = subjects;
        this.expire = expire;
    }

    /// <summary>Whether the timer is set (it is created with the first message, or by a configuration with an age).</summary>
    public bool IsArmed => timer is not null;

    /// <summary>How long until the first message expires, plus a millisecond; the whole age when the stream is empty.</summary>
    public TimeSpan DueIn(TimeSpan maxAge)
    {
        if (log.Count == 0)
        {
            // Nothing to expire before then.
            return maxAge;
        }

        var expiresAt = log.FirstTimestamp + (maxAge.Ticks * 100);
        return TimeSpan.FromTicks(Math.Max(0, (expiresAt - MessageLog.Now()) / 100)) + TimeSpan.FromMilliseconds(1);
    }

    /// <summary>Arms, re-arms or (with no age, or closed) stops the timer for the current first message.</summary>
    public void Schedule(TimeSpan maxAge, bool closed)
    {
        if (maxAge <= TimeSpan.Zero || closed)
        {
            Dispose();
            return;
        }

        var due = DueIn(maxAge);
        timer ??= new Timer(static state => ((AgeExpiry)state!).expire(), this, Timeout.Infinite, Timeout.Infinite);
        timer.Change(due, Timeout.InfiniteTimeSpan);
    }

    /// <summary>Removes every message older than <paramref name="maxAge"/>, oldest first.</summary>
    public void RemoveExpired(TimeSpan maxAge, RemovalBuffer? removed)
    {
        var cutoff = MessageLog.Now() - (maxAge.Ticks * 100);
        while (log.Count > 0 && log.TryGet(log.First, out var entry) && entry.Timestamp <= cutoff)
        {
            log.Remove(log.First, secureErase: false, subjects, removed);
        }
    }

    public void Dispose()
    {
        timer?.Dispose();
        timer = null;
    }
}
