using Broker.Abstractions;

namespace Broker.Storage.MemStore.Internal;

/// <summary>Loads into the caller's <see cref="StoredMessage"/> (nats-server <c>LoadMsg</c>, <c>LoadNextMsg</c>, <c>LoadLastMsg</c>).</summary>
internal sealed partial class MemoryStreamStore
{
    public LoadStatus Load(ulong sequence, StoredMessage message)
    {
        ArgumentNullException.ThrowIfNull(message);
        lock (gate)
        {
            if (messages.TryGetValue(sequence, out var entry))
            {
                Fill(message, sequence, entry);
                return LoadStatus.Found;
            }

            return sequence <= lastSequence ? LoadStatus.NotFound : LoadStatus.EndOfStream;
        }
    }

    public LoadStatus LoadNext(ReadOnlySpan<byte> filter, ulong start, StoredMessage message, out ulong scanned)
    {
        ArgumentNullException.ThrowIfNull(message);
        lock (gate)
        {
            if (start < firstSequence)
            {
                start = firstSequence;
            }

            if (messageCount == 0 || start > lastSequence)
            {
                scanned = lastSequence;
                return LoadStatus.EndOfStream;
            }

            var from = start;
            var to = lastSequence;
            var all = Subjects.IsMatchAll(filter);
            var literal = !all && !Subjects.HasWildcard(filter);
            SubjectRecord? only = null;
            if (literal)
            {
                // One subject: its own first and last narrow the scan.
                if (!subjectsBySpan.TryGetValue(filter, out only))
                {
                    scanned = lastSequence;
                    return LoadStatus.EndOfStream;
                }

                RecalculateFirstAndLast(only);
                if (only.Last < start)
                {
                    scanned = lastSequence;
                    return LoadStatus.EndOfStream;
                }

                from = Math.Max(start, only.First);
                to = only.Last;
            }

            for (var seq = from; seq <= to; seq++)
            {
                if (!messages.TryGetValue(seq, out var entry))
                {
                    continue;
                }

                if (all || (literal ? ReferenceEquals(entry.Subject, only) : Subjects.MatchesLiteral(filter, entry.Subject.Subject)))
                {
                    Fill(message, seq, entry);
                    scanned = seq;
                    return LoadStatus.Found;
                }
            }

            scanned = lastSequence;
            return LoadStatus.EndOfStream;
        }
    }

    public LoadStatus LoadLast(ReadOnlySpan<byte> filter, StoredMessage message)
    {
        ArgumentNullException.ThrowIfNull(message);
        lock (gate)
        {
            if (messageCount == 0)
            {
                return LoadStatus.NotFound;
            }

            ulong sequence = 0;
            if (Subjects.IsMatchAll(filter))
            {
                for (var seq = lastSequence; seq >= firstSequence && seq > 0; seq--)
                {
                    if (messages.ContainsKey(seq))
                    {
                        sequence = seq;
                        break;
                    }
                }
            }
            else if (!Subjects.HasWildcard(filter))
            {
                if (subjectsBySpan.TryGetValue(filter, out var record))
                {
                    RecalculateFirstAndLast(record);
                    sequence = record.Last;
                }
            }
            else
            {
                foreach (var record in subjects.Values)
                {
                    if (Subjects.MatchesLiteral(filter, record.Subject))
                    {
                        RecalculateFirstAndLast(record);
                        sequence = Math.Max(sequence, record.Last);
                    }
                }
            }

            if (sequence > 0 && messages.TryGetValue(sequence, out var entry))
            {
                Fill(message, sequence, entry);
                return LoadStatus.Found;
            }

            return LoadStatus.NotFound;
        }
    }

    public ulong GetSequenceFromTime(long timestamp)
    {
        lock (gate)
        {
            if (messageCount == 0)
            {
                return lastSequence + 1;
            }

            if (timestamp <= firstTimestamp)
            {
                return firstSequence;
            }

            if (timestamp > lastTimestamp)
            {
                return lastSequence + 1;
            }

            // Timestamps never decrease with the sequence: binary search for the first stored message at or after
            // the time, stepping over deleted sequences.
            var result = lastSequence + 1;
            var low = firstSequence;
            var high = lastSequence;
            while (low <= high)
            {
                var mid = low + ((high - low) / 2);
                var probe = mid;
                MessageEntry entry = default;
                while (probe <= high && !messages.TryGetValue(probe, out entry))
                {
                    probe++;
                }

                if (probe <= high && entry.Timestamp < timestamp)
                {
                    low = probe + 1;
                    continue;
                }

                if (probe <= high)
                {
                    result = probe;
                }

                if (mid == 0)
                {
                    break;
                }

                high = mid - 1;
            }

            return result;
        }
    }

    private static void Fill(StoredMessage message, ulong sequence, in MessageEntry entry)
    {
        var subject = entry.Subject.Subject;
        var span = message.Prepare(sequence, entry.Timestamp, subject.Length, entry.HeadersLength, entry.PayloadLength);
        subject.CopyTo(span);
        entry.Data.AsSpan(0, entry.HeadersLength + entry.PayloadLength).CopyTo(span[subject.Length..]);
    }

    private static bool Matches(SubjectRecord record, ReadOnlySpan<byte> filter, bool literal) =>
        literal ? record.Subject.AsSpan().SequenceEqual(filter) : Subjects.MatchesLiteral(filter, record.Subject);
}
