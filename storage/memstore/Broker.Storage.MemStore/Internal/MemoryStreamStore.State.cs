using Broker.Abstractions;

namespace Broker.Storage.MemStore.Internal;

/// <summary>State queries (nats-server <c>State</c>, <c>FilteredState</c>, <c>SubjectsState</c>, <c>NumPending</c>).</summary>
internal sealed partial class MemoryStreamStore
{
    public StreamState GetState()
    {
        lock (gate)
        {
            var span = messageCount == 0 || lastSequence < firstSequence ? 0 : lastSequence - firstSequence + 1;
            var deleted = span > messageCount ? (int)(span - messageCount) : 0;
            return new StreamState(messageCount, byteCount, firstSequence, firstTimestamp, lastSequence, lastTimestamp, subjects.Count, deleted);
        }
    }

    public IReadOnlyList<ulong> GetDeletedSequences()
    {
        lock (gate)
        {
            var deleted = new List<ulong>();
            if (messageCount == 0)
            {
                return deleted;
            }

            for (var seq = firstSequence; seq <= lastSequence; seq++)
            {
                if (!messages.ContainsKey(seq))
                {
                    deleted.Add(seq);
                }
            }

            return deleted;
        }
    }

    public SubjectState GetFilteredState(ulong start, ReadOnlySpan<byte> filter)
    {
        lock (gate)
        {
            return FilteredStateLocked(start, filter);
        }
    }

    public IReadOnlyDictionary<string, SubjectState> GetSubjectsState(string filter)
    {
        ArgumentNullException.ThrowIfNull(filter);
        var filterBytes = System.Text.Encoding.UTF8.GetBytes(filter);
        lock (gate)
        {
            var result = new Dictionary<string, SubjectState>(StringComparer.Ordinal);
            foreach (var record in subjects.Values)
            {
                if (Subjects.MatchesLiteral(filterBytes, record.Subject))
                {
                    RecalculateFirstAndLast(record);
                    result[record.Text] = new SubjectState(record.Messages, record.First, record.Last);
                }
            }

            return result;
        }
    }

    public PendingCount NumPending(ulong start, ReadOnlySpan<byte> filter, bool lastPerSubject)
    {
        lock (gate)
        {
            if (!lastPerSubject)
            {
                return new PendingCount(FilteredStateLocked(start, filter).Messages, lastSequence);
            }

            // Subjects whose last message is at or after the start.
            ulong total = 0;
            foreach (var record in subjects.Values)
            {
                if (Subjects.MatchesLiteral(filter, record.Subject))
                {
                    RecalculateFirstAndLast(record);
                    if (record.Last >= start)
                    {
                        total++;
                    }
                }
            }

            return new PendingCount(total, lastSequence);
        }
    }

    private SubjectState FilteredStateLocked(ulong start, ReadOnlySpan<byte> filter)
    {
        if (start < firstSequence)
        {
            start = firstSequence;
        }

        if (messageCount == 0 || start > lastSequence)
        {
            return default;
        }

        if (Subjects.IsMatchAll(filter))
        {
            if (start <= firstSequence)
            {
                return new SubjectState(messageCount, firstSequence, lastSequence);
            }

            return CountRange(start, lastSequence, null, filter, all: true);
        }

        if (!Subjects.HasWildcard(filter))
        {
            if (!subjectsBySpan.TryGetValue(filter, out var record))
            {
                return default;
            }

            RecalculateFirstAndLast(record);
            if (start <= record.First)
            {
                return new SubjectState(record.Messages, record.First, record.Last);
            }

            return record.Last < start ? default : CountRange(start, record.Last, record, filter, all: false);
        }

        // A wildcard: whole subjects when they start at or after the start, a scan for the rest.
        ulong messagesCount = 0;
        var first = ulong.MaxValue;
        ulong last = 0;
        var needsScan = false;
        foreach (var record in subjects.Values)
        {
            if (!Subjects.MatchesLiteral(filter, record.Subject))
            {
                continue;
            }

            RecalculateFirstAndLast(record);
            if (record.Last < start)
            {
                continue;
            }

            if (record.First >= start)
            {
                messagesCount += record.Messages;
                first = Math.Min(first, record.First);
                last = Math.Max(last, record.Last);
            }
            else
            {
                needsScan = true;
                break;
            }
        }

        if (needsScan)
        {
            return CountRange(start, lastSequence, null, filter, all: false);
        }

        return messagesCount == 0 ? default : new SubjectState(messagesCount, first, last);
    }

    private SubjectState CountRange(ulong from, ulong to, SubjectRecord? only, ReadOnlySpan<byte> filter, bool all)
    {
        ulong count = 0;
        ulong first = 0;
        ulong last = 0;
        for (var seq = from; seq <= to; seq++)
        {
            if (!messages.TryGetValue(seq, out var entry))
            {
                continue;
            }

            var matches = all || (only is not null ? ReferenceEquals(entry.Subject, only) : Subjects.MatchesLiteral(filter, entry.Subject.Subject));
            if (matches)
            {
                count++;
                if (first == 0)
                {
                    first = seq;
                }

                last = seq;
            }
        }

        return new SubjectState(count, first, last);
    }
}
