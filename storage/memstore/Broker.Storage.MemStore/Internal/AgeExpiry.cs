namespace Broker.Storage.MemStore.Internal;

/// <summary>
/// <c>max_age</c> and the per-message times to live of a memory stream (nats-server memstore's <c>ageChk</c> and
/// <c>expireMsgs</c>): a timer due when the next message expires; when it fires, the store removes every expired
/// message (<see cref="RemoveExpired"/>) and re-arms it for the next. A stream without either has no timer. Not
/// thread-safe: the store arms it and removes under its lock; the timer calls the store, which takes the lock.
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

    /// <summary>The messages' own times to live; null until the first message with one.</summary>
    public MessageTtls? Ttls { get; private set; }

    /// <summary>Whether the timer is set (it is created with the first message, or by a configuration with an age).</summary>
    public bool IsArmed => timer is not null;

    /// <summary>The times to live, made with the first message that has one.</summary>
    public MessageTtls EnsureTtls() => Ttls ??= new MessageTtls();

    /// <summary>
    /// How long until the next message expires, by <paramref name="maxAge"/> (the first that may expire by age) or
    /// its own time to live, plus a millisecond; the whole age when nothing is stored; null when nothing ever will.
    /// </summary>
    public TimeSpan? DueIn(TimeSpan maxAge)
    {
        var next = Ttls?.NextExpiry ?? long.MaxValue;
        if (maxAge > TimeSpan.Zero)
        {
            var first = FirstAgeing();
            if (first == 0 && next == long.MaxValue)
            {
                // Nothing to expire before then.
                return maxAge;
            }

            next = Math.Min(next, first == 0 ? long.MaxValue : first + (maxAge.Ticks * 100));
        }

        if (next == long.MaxValue)
        {
            return null;
        }

        return TimeSpan.FromTicks(Math.Max(0, (next - MessageLog.Now()) / 100)) + TimeSpan.FromMilliseconds(1);
    }

    /// <summary>Arms, re-arms or (nothing to expire, or closed) stops the timer for the next expiry.</summary>
    public void Schedule(TimeSpan maxAge, bool closed)
    {
        var due = closed ? null : DueIn(maxAge);
        if (due is not { } delay)
        {
            Dispose();
            return;
        }

        timer ??= new Timer(static state => ((AgeExpiry)state!).expire(), this, Timeout.Infinite, Timeout.Infinite);
        timer.Change(delay, Timeout.InfiniteTimeSpan);
    }

    /// <summary>
    /// Removes every message older than <paramref name="maxAge"/> (but those that never expire, and those <paramref
    /// name="emptied"/> keeps for their subjects' delete markers), oldest first, then every message whose time to live
    /// has passed.
    /// </summary>
    /// <param name="maxAge">The stream's <c>max_age</c>.</param>
    /// <param name="removed">Where removals are noted for the storage update handler, or null.</param>
    /// <param name="emptied">Where the last messages of their subjects are kept and noted, or null.</param>
    public void RemoveExpired(TimeSpan maxAge, RemovalBuffer? removed, ExpiredSubjects? emptied)
    {
        var now = MessageLog.Now();
        if (maxAge > TimeSpan.Zero)
        {
            var cutoff = now - (maxAge.Ticks * 100);
            var sequence = log.First;
            while (log.Count > 0 && log.TryGet(log.First, out var first) && first.Timestamp <= cutoff && Ttls?.IsNever(log.First) != true)
            {
                if (emptied?.Keep(log, log.First) == true)
                {
                    sequence = log.First + 1;
                    break;
                }

                log.Remove(log.First, secureErase: false, subjects, removed);
                sequence = log.First;
            }

            // nats-server 2.11: a message whose Nats-TTL is "never" outlives max_age, and one kept for its subject's
            // delete marker stays until the marker: look past them.
            for (; sequence <= log.Last && log.Count > 0; sequence = Math.Max(sequence + 1, log.First))
            {
                if (!log.TryGet(sequence, out var entry) || Ttls?.IsNever(sequence) == true)
                {
                    continue;
                }

                if (entry.Timestamp > cutoff)
                {
                    break;
                }

                if (emptied?.Keep(log, sequence) != true)
                {
                    log.Remove(sequence, secureErase: false, subjects, removed);
                }
            }
        }

        Ttls?.RemoveDue(now, log, subjects, removed, emptied);
    }

    public void Dispose()
    {
        timer?.Dispose();
        timer = null;
    }

    /// <summary>The timestamp of the first message <c>max_age</c> may remove; 0 when there is none.</summary>
    private long FirstAgeing()
    {
        if (log.Count == 0)
        {
            return 0;
        }

        if (Ttls is not { HasNever: true } ttls)
        {
            return log.FirstTimestamp;
        }

        for (var sequence = log.First; sequence <= log.Last; sequence++)
        {
            if (log.TryGet(sequence, out var entry) && !ttls.IsNever(sequence))
            {
                return entry.Timestamp;
            }
        }

        return 0;
    }
}
