namespace Broker.Storage.MemStore.Internal;

/// <summary>
/// The per-message times to live of a memory stream (nats-server 2.11 memstore's <c>ttls</c> hash wheel): when each
/// message with a time to live expires, and which messages never do (exempt from <c>max_age</c> too). Made with the
/// first such message, so a stream without any pays nothing. Entries of messages removed otherwise stay until they are
/// due (their removal then finds nothing) or a truncation drops them, as sequences above it are given out again. Not
/// thread-safe: the store calls it under its lock.
/// </summary>
internal sealed class MessageTtls
{
    private readonly SortedSet<(long Expires, ulong Sequence)> due = [];
    private HashSet<ulong>? never;

    /// <summary>When the next message expires (Unix nanoseconds); <see cref="long.MaxValue"/> when none does.</summary>
    public long NextExpiry => due.Count == 0 ? long.MaxValue : due.Min.Expires;

    /// <summary>Whether some message never expires (so <c>max_age</c> must look past it).</summary>
    public bool HasNever => never is { Count: > 0 };

    /// <summary>Notes the time to live of the message stored as <paramref name="sequence"/> at <paramref name="timestamp"/>.</summary>
    public void Add(ulong sequence, long timestamp, TimeSpan timeToLive)
    {
        if (timeToLive == Timeout.InfiniteTimeSpan)
        {
            (never ??= []).Add(sequence);
            return;
        }

        var expires = timeToLive.Ticks >= (long.MaxValue - timestamp) / 100 ? long.MaxValue : timestamp + (timeToLive.Ticks * 100);
        due.Add((expires, sequence));
    }

    /// <summary>Whether the message never expires.</summary>
    public bool IsNever(ulong sequence) => never is not null && never.Contains(sequence);

    /// <summary>Removes the messages due at <paramref name="now"/>, noting them in <paramref name="removed"/> but those <paramref name="emptied"/> keeps for their subjects' markers.</summary>
    public void RemoveDue(long now, MessageLog log, SubjectIndex subjects, RemovalBuffer? removed, ExpiredSubjects? emptied)
    {
        while (due.Count > 0 && due.Min.Expires <= now)
        {
            var entry = due.Min;
            due.Remove(entry);
            if (emptied?.Keep(log, entry.Sequence) != true)
            {
                log.Remove(entry.Sequence, secureErase: false, subjects, removed);
            }
        }
    }

    /// <summary>Forgets every message above <paramref name="sequence"/> (a truncation gives those sequences out again).</summary>
    public void ForgetAbove(ulong sequence)
    {
        due.RemoveWhere(entry => entry.Sequence > sequence);
        never?.RemoveWhere(entry => entry > sequence);
    }

    /// <summary>Forgets everything (the store is emptied).</summary>
    public void Clear()
    {
        due.Clear();
        never?.Clear();
    }
}
