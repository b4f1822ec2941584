using Broker.Abstractions;

namespace Broker.Storage.MemStore.Internal;

/// <summary>
/// A memory stream's subjects (nats-server memstore's <c>fss</c>): each subject's record with its message count and
/// its first and last sequences, which a removal only marks stale and a query recomputes by scanning the
/// <see cref="MessageLog"/>. Answers the per-subject questions (filtered state, subjects state, last per subject)
/// from the counters, scanning the log only when a start falls inside a subject. Not thread-safe: the store calls it
/// under its lock.
/// </summary>
internal sealed class SubjectIndex
{
    private readonly MessageLog log;
    private readonly Dictionary<byte[], SubjectRecord> subjects = new(ByteArrayComparer.Instance);
    private readonly Dictionary<byte[], SubjectRecord>.AlternateLookup<ReadOnlySpan<byte>> subjectsBySpan;

    public SubjectIndex(MessageLog log)
    {
        this.log = log;
        subjectsBySpan = subjects.GetAlternateLookup<ReadOnlySpan<byte>>();
    }

    /// <summary>Subjects with at least one message.</summary>
    public int Count => subjects.Count;

    /// <summary>The record of a subject with messages, or null; allocates nothing.</summary>
    public SubjectRecord? Find(ReadOnlySpan<byte> subject) => subjectsBySpan.TryGetValue(subject, out var record) ? record : null;

    /// <summary>Counts a message appended as <paramref name="sequence"/> on its subject, creating the record for a new one.</summary>
    /// <param name="subject">The subject.</param>
    /// <param name="record">Its record, when <see cref="Find"/> found one.</param>
    /// <param name="sequence">The message's sequence, the stream's last.</param>
    public SubjectRecord Add(ReadOnlySpan<byte> subject, SubjectRecord? record, ulong sequence)
    {
        if (record is null)
        {
            record = new SubjectRecord(subject.ToArray()) { Messages = 1, First = sequence, Last = sequence };
            subjects.Add(record.Subject, record);
            return record;
        }

        record.Messages++;
        record.Last = sequence;
        record.LastNeedsUpdate = false;
        if (record.Messages == 1)
        {
            record.First = sequence;
            record.FirstNeedsUpdate = false;
        }

        return record;
    }

    /// <summary>Updates a subject's state after one of its messages was removed; its first or last is recomputed lazily.</summary>
    public void RemoveMessage(SubjectRecord record, ulong sequence)
    {
        if (record.Messages <= 1)
        {
            subjects.Remove(record.Subject);
            record.Messages = 0;
            return;
        }

        record.Messages--;
        if (record.Messages == 1)
        {
            // With one message left, whichever end was not removed is it.
            if (!record.LastNeedsUpdate && sequence != record.Last)
            {
                record.First = record.Last;
                record.FirstNeedsUpdate = false;
                return;
            }

            if (!record.FirstNeedsUpdate && sequence != record.First)
            {
                record.Last = record.First;
                record.LastNeedsUpdate = false;
                return;
            }
        }

        record.FirstNeedsUpdate |= sequence == record.First;
        record.LastNeedsUpdate |= sequence == record.Last;
    }

    /// <summary>Recomputes a subject's first and last sequences when a removal left them stale.</summary>
    public void Refresh(SubjectRecord record)
    {
        if (record.FirstNeedsUpdate && log.FirstOf(record, Math.Max(record.First + 1, log.First), record.Last) is var first and > 0)
        {
            record.First = first;
            record.FirstNeedsUpdate = false;
        }

        if (record.LastNeedsUpdate && log.LastOf(record, Math.Min(record.Last - 1, log.Last), record.First) is var last and > 0)
        {
            record.Last = last;
            record.LastNeedsUpdate = false;
        }
    }

    public void Clear() => subjects.Clear();

    /// <summary>A copy of the records, for changes made while going through them.</summary>
    public List<SubjectRecord> ToList() => [.. subjects.Values];

    /// <summary>
    /// Messages at or after <paramref name="start"/> on subjects matching <paramref name="filter"/>, with the first and
    /// last of them (nats-server <c>FilteredState</c>).
    /// </summary>
    public SubjectState FilteredState(ulong start, ReadOnlySpan<byte> filter)
    {
        if (start < log.First)
        {
            start = log.First;
        }

        if (log.Count == 0 || start > log.Last)
        {
            return default;
        }

        if (Subjects.IsMatchAll(filter))
        {
            if (start <= log.First)
            {
                return new SubjectState(log.Count, log.First, log.Last);
            }

            return log.CountRange(start, log.Last, null, filter, all: true);
        }

        if (!Subjects.HasWildcard(filter))
        {
            if (!subjectsBySpan.TryGetValue(filter, out var record))
            {
                return default;
            }

            Refresh(record);
            if (start <= record.First)
            {
                return new SubjectState(record.Messages, record.First, record.Last);
            }

            return record.Last < start ? default : log.CountRange(start, record.Last, record, filter, all: false);
        }

        // A wildcard: whole subjects when they start at or after the start, a scan for the rest.
        ulong messages = 0;
        var first = ulong.MaxValue;
        ulong last = 0;
        foreach (var record in subjects.Values)
        {
            if (!Subjects.MatchesLiteral(filter, record.Subject))
            {
                continue;
            }

            Refresh(record);
            if (record.Last < start)
            {
                continue;
            }

            if (record.First < start)
            {
                return log.CountRange(start, log.Last, null, filter, all: false);
            }

            messages += record.Messages;
            first = Math.Min(first, record.First);
            last = Math.Max(last, record.Last);
        }

        return messages == 0 ? default : new SubjectState(messages, first, last);
    }

    /// <summary>The state of every subject matching <paramref name="filter"/> (nats-server <c>SubjectsState</c>).</summary>
    public Dictionary<string, SubjectState> SubjectsState(ReadOnlySpan<byte> filter)
    {
        var result = new Dictionary<string, SubjectState>(StringComparer.Ordinal);
        foreach (var record in subjects.Values)
        {
            if (Subjects.MatchesLiteral(filter, record.Subject))
            {
                Refresh(record);
                result[record.Text] = new SubjectState(record.Messages, record.First, record.Last);
            }
        }

        return result;
    }

    /// <summary>Subjects matching <paramref name="filter"/> whose last message is at or after <paramref name="start"/>.</summary>
    public ulong CountLastAtOrAfter(ulong start, ReadOnlySpan<byte> filter)
    {
        ulong total = 0;
        foreach (var record in subjects.Values)
        {
            if (Subjects.MatchesLiteral(filter, record.Subject))
            {
                Refresh(record);
                if (record.Last >= start)
                {
                    total++;
                }
            }
        }

        return total;
    }

    /// <summary>The last message on a subject matching <paramref name="filter"/>, or 0 (nats-server <c>LoadLastMsg</c>).</summary>
    public ulong LastSequence(ReadOnlySpan<byte> filter)
    {
        if (Subjects.IsMatchAll(filter))
        {
            return log.LastStored();
        }

        if (!Subjects.HasWildcard(filter))
        {
            if (!subjectsBySpan.TryGetValue(filter, out var record))
            {
                return 0;
            }

            Refresh(record);
            return record.Last;
        }

        ulong sequence = 0;
        foreach (var record in subjects.Values)
        {
            if (Subjects.MatchesLiteral(filter, record.Subject))
            {
                Refresh(record);
                sequence = Math.Max(sequence, record.Last);
            }
        }

        return sequence;
    }

    /// <summary>Whether a subject matches a filter: byte for byte when the filter is literal.</summary>
    public static bool Matches(SubjectRecord record, ReadOnlySpan<byte> filter, bool literal) =>
        literal ? record.Subject.AsSpan().SequenceEqual(filter) : Subjects.MatchesLiteral(filter, record.Subject);
}
