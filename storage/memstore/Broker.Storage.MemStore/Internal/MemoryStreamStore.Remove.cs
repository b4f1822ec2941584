using System.Security.Cryptography;
using System.Text;
using Broker.Abstractions;

namespace Broker.Storage.MemStore.Internal;

/// <summary>Removals: one message, purges, compaction and truncation (nats-server <c>removeMsg</c>, <c>PurgeEx</c>, <c>Compact</c>, <c>Truncate</c>).</summary>
internal sealed partial class MemoryStreamStore
{
    public bool Remove(ulong sequence, bool secureErase = false)
    {
        var removed = RemovalBuffer.Rent();
        bool found;
        lock (gate)
        {
            ThrowIfClosed();
            found = RemoveLocked(sequence, secureErase, removed);
        }

        ReportRemovals(removed);
        return found;
    }

    public ulong Purge()
    {
        ulong purged;
        ulong bytes;
        lock (gate)
        {
            ThrowIfClosed();
            purged = messageCount;
            bytes = byteCount;
            ResetTo(lastSequence + 1);
        }

        ReportBulk(purged, bytes);
        return purged;
    }

    public ulong Purge(string subject, ulong sequence, ulong keep)
    {
        ArgumentNullException.ThrowIfNull(subject);
        var filter = Encoding.UTF8.GetBytes(subject);
        if (Subjects.IsMatchAll(filter))
        {
            if (keep == 0 && sequence <= 1)
            {
                return Purge();
            }

            if (sequence > 1)
            {
                return Compact(sequence);
            }

            ulong last;
            lock (gate)
            {
                if (keep >= messageCount)
                {
                    return 0;
                }

                last = lastSequence;
            }

            return Compact(last - keep + 1);
        }

        var removed = RemovalBuffer.Rent();
        ulong purgedCount = 0;
        lock (gate)
        {
            ThrowIfClosed();
            var state = FilteredStateLocked(firstSequence, filter);
            if (state.Messages > 0 && (keep == 0 || keep < state.Messages))
            {
                var toPurge = keep > 0 ? state.Messages - keep : state.Messages;
                var last = sequence > 1 ? Math.Min(sequence - 1, state.Last) : state.Last;
                var literal = !Subjects.HasWildcard(filter);
                for (var seq = state.First; seq <= last && purgedCount < toPurge; seq++)
                {
                    if (messages.TryGetValue(seq, out var entry) && Matches(entry.Subject, filter, literal)
                        && RemoveLocked(seq, secureErase: false, removed))
                    {
                        purgedCount++;
                    }
                }
            }
        }

        ReportRemovals(removed);
        return purgedCount;
    }

    public ulong Compact(ulong sequence)
    {
        if (sequence == 0)
        {
            return Purge();
        }

        ulong purged = 0;
        ulong bytes = 0;
        lock (gate)
        {
            ThrowIfClosed();
            if (firstSequence > sequence)
            {
                return 0;
            }

            if (sequence > lastSequence)
            {
                // Past the end: empty, and the next append gets the requested sequence.
                purged = messageCount;
                bytes = byteCount;
                Volatile.Write(ref lastSequence, sequence - 1);
                ResetTo(sequence);
            }
            else
            {
                for (var seq = firstSequence; seq < sequence; seq++)
                {
                    if (messages.Remove(seq, out var entry))
                    {
                        purged++;
                        bytes += entry.Size;
                        RemoveFromSubject(entry.Subject, seq);
                        ReturnBuffer(entry.Data);
                    }
                }

                messageCount -= purged;
                byteCount -= bytes;
                firstSequence = sequence;
                firstTimestamp = 0;
                AdvanceFirst();
            }
        }

        ReportBulk(purged, bytes);
        return purged;
    }

    public void Truncate(ulong sequence)
    {
        ulong purged = 0;
        ulong bytes = 0;
        lock (gate)
        {
            ThrowIfClosed();
            if (sequence == 0)
            {
                purged = messageCount;
                bytes = byteCount;
                Volatile.Write(ref lastSequence, 0);
                lastTimestamp = 0;
                ResetTo(0);
            }
            else
            {
                var lastTime = messages.TryGetValue(sequence, out var kept) ? kept.Timestamp : lastTimestamp;
                for (var seq = lastSequence; seq > sequence; seq--)
                {
                    if (messages.Remove(seq, out var entry))
                    {
                        purged++;
                        bytes += entry.Size;
                        RemoveFromSubject(entry.Subject, seq);
                        ReturnBuffer(entry.Data);
                    }
                }

                messageCount -= purged;
                byteCount -= bytes;
                Volatile.Write(ref lastSequence, sequence);
                lastTimestamp = lastTime;
                if (messageCount == 0)
                {
                    firstSequence = sequence + 1;
                    firstTimestamp = 0;
                }
            }
        }

        ReportBulk(purged, bytes);
    }

    /// <summary>Removes one message under the lock, noting it in <paramref name="removed"/> for the handler.</summary>
    private bool RemoveLocked(ulong sequence, bool secureErase, RemovalBuffer removed)
    {
        if (!messages.Remove(sequence, out var entry))
        {
            return false;
        }

        var size = entry.Size;
        messageCount--;
        byteCount -= Math.Min(size, byteCount);
        if (sequence == firstSequence)
        {
            AdvanceFirst();
        }

        RemoveFromSubject(entry.Subject, sequence);
        if (secureErase)
        {
            RandomNumberGenerator.Fill(entry.Data.AsSpan(0, entry.HeadersLength + entry.PayloadLength));
        }

        ReturnBuffer(entry.Data);
        if (updates is not null)
        {
            removed.Add(sequence, entry.Subject, size);
        }

        return true;
    }

    /// <summary>Moves the first sequence to the next stored message (or past the last when none is left).</summary>
    private void AdvanceFirst()
    {
        if (messageCount == 0)
        {
            firstSequence = lastSequence + 1;
            firstTimestamp = 0;
            return;
        }

        for (var seq = firstSequence; seq <= lastSequence; seq++)
        {
            if (messages.TryGetValue(seq, out var entry))
            {
                firstSequence = seq;
                firstTimestamp = entry.Timestamp;
                return;
            }
        }
    }

    /// <summary>Updates a subject's state after one of its messages was removed; its first or last is recomputed lazily.</summary>
    private void RemoveFromSubject(SubjectRecord record, ulong sequence)
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

    private void RecalculateFirstAndLast(SubjectRecord record)
    {
        if (record.FirstNeedsUpdate)
        {
            for (var seq = Math.Max(record.First + 1, firstSequence); seq <= record.Last; seq++)
            {
                if (messages.TryGetValue(seq, out var entry) && ReferenceEquals(entry.Subject, record))
                {
                    record.First = seq;
                    record.FirstNeedsUpdate = false;
                    break;
                }
            }
        }

        if (record.LastNeedsUpdate)
        {
            for (var seq = Math.Min(record.Last - 1, lastSequence); seq >= record.First && seq > 0; seq--)
            {
                if (messages.TryGetValue(seq, out var entry) && ReferenceEquals(entry.Subject, record))
                {
                    record.Last = seq;
                    record.LastNeedsUpdate = false;
                    break;
                }
            }
        }
    }

    /// <summary>Drops every message and subject; <paramref name="nextFirst"/> becomes the first sequence.</summary>
    private void ResetTo(ulong nextFirst)
    {
        foreach (var entry in messages.Values)
        {
            ReturnBuffer(entry.Data);
        }

        messages.Clear();
        subjects.Clear();
        messageCount = 0;
        byteCount = 0;
        firstSequence = nextFirst;
        firstTimestamp = 0;
    }

    private void ReportBulk(ulong purged, ulong bytes)
    {
        if (purged > 0 && updates is { } handler)
        {
            handler(-(long)purged, -(long)bytes, 0, default);
        }
    }
}
