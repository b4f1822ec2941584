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
            if (log.TryGet(sequence, out var entry))
            {
                Fill(message, sequence, entry);
                return LoadStatus.Found;
            }

            return sequence <= log.Last ? LoadStatus.NotFound : LoadStatus.EndOfStream;
        }
    }

    public LoadStatus LoadNext(ReadOnlySpan<byte> filter, ulong start, StoredMessage message, out ulong scanned)
    {
        ArgumentNullException.ThrowIfNull(message);
        lock (gate)
        {
            if (start < log.First)
            {
                start = log.First;
            }

            scanned = log.Last;
            if (log.Count == 0 || start > log.Last)
            {
                return LoadStatus.EndOfStream;
            }

            var from = start;
            var to = log.Last;
            var all = Subjects.IsMatchAll(filter);
            SubjectRecord? only = null;
            if (!all && !Subjects.HasWildcard(filter))
            {
                // One subject: its own first and last narrow the scan.
                only = subjects.Find(filter);
                if (only is null)
                {
                    return LoadStatus.EndOfStream;
                }

                subjects.Refresh(only);
                if (only.Last < start)
                {
                    return LoadStatus.EndOfStream;
                }

                from = Math.Max(start, only.First);
                to = only.Last;
            }

            var found = log.FindFirst(from, to, only, filter, all, out var entry);
            if (found == 0)
            {
                return LoadStatus.EndOfStream;
            }

            Fill(message, found, entry);
            scanned = found;
            return LoadStatus.Found;
        }
    }

    public LoadStatus LoadLast(ReadOnlySpan<byte> filter, StoredMessage message)
    {
        ArgumentNullException.ThrowIfNull(message);
        lock (gate)
        {
            if (log.Count == 0)
            {
                return LoadStatus.NotFound;
            }

            var sequence = subjects.LastSequence(filter);
            if (sequence > 0 && log.TryGet(sequence, out var entry))
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
            return log.SequenceFromTime(timestamp);
        }
    }

    private static void Fill(StoredMessage message, ulong sequence, in MessageEntry entry)
    {
        var subject = entry.Subject.Subject;
        var span = message.Prepare(sequence, entry.Timestamp, subject.Length, entry.HeadersLength, entry.PayloadLength);
        subject.CopyTo(span);
        entry.Data.AsSpan(0, entry.HeadersLength + entry.PayloadLength).CopyTo(span[subject.Length..]);
    }
}
