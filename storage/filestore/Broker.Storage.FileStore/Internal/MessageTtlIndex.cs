namespace Broker.Storage.FileStore.Internal;

/// <summary>
/// When each message with a time to live expires (nats-server 2.11 filestore's <c>ttls</c> hash wheel, kept in
/// <c>thw.db</c>): made with the first such message, rebuilt at recovery from the checkpoint and the
/// <see cref="Format.RecordKind.Ttl"/> records after it. Messages that never expire are kept apart, as <c>max_age</c>
/// spares them. An entry whose message was removed otherwise stays until it is due (its removal then finds nothing)
/// or a truncation drops it. Not thread-safe: the stream store's lock guards every call.
/// </summary>
internal sealed class MessageTtlIndex
{
    /// <summary>The expiry of a message that never expires.</summary>
    public const long Never = long.MaxValue;

    private readonly SortedSet<(long Expires, ulong Sequence)> due = [];
    private readonly HashSet<ulong> never = [];

    /// <summary>Whether some message never expires.</summary>
    public bool HasNever => never.Count > 0;

    /// <summary>When a message stored at <paramref name="timestamp"/> with <paramref name="timeToLive"/> expires.</summary>
    public static long ExpiresAt(long timestamp, TimeSpan timeToLive) =>
        timeToLive == Timeout.InfiniteTimeSpan || timeToLive.Ticks >= (Never - timestamp) / 100 ? Never : timestamp + (timeToLive.Ticks * 100);

    public void Add(ulong sequence, long expires)
    {
        if (expires == Never)
        {
            never.Add(sequence);
        }
        else
        {
            due.Add((expires, sequence));
        }
    }

    public bool IsNever(ulong sequence) => never.Contains(sequence);

    /// <summary>Takes out the next message due at <paramref name="now"/>; false when none is.</summary>
    public bool TryTakeDue(long now, out ulong sequence)
    {
        sequence = 0;
        if (due.Count == 0 || due.Min.Expires > now)
        {
            return false;
        }

        var entry = due.Min;
        due.Remove(entry);
        sequence = entry.Sequence;
        return true;
    }

    /// <summary>Every entry, for the checkpoint: the sequence and when it expires.</summary>
    public IEnumerable<(ulong Sequence, long Expires)> Entries()
    {
        foreach (var (expires, sequence) in due)
        {
            yield return (sequence, expires);
        }

        foreach (var sequence in never)
        {
            yield return (sequence, Never);
        }
    }

    /// <summary>Drops the entries above <paramref name="sequence"/> (a truncation gives those sequences out again).</summary>
    public void ForgetAbove(ulong sequence)
    {
        due.RemoveWhere(entry => entry.Sequence > sequence);
        never.RemoveWhere(entry => entry > sequence);
    }

    public void Clear()
    {
        due.Clear();
        never.Clear();
    }
}
