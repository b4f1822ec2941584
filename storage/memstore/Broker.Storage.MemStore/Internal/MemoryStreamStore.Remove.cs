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
            found = log.Remove(sequence, secureErase, subjects, Tracked(removed));
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
            purged = log.Count;
            bytes = log.Bytes;
            ResetTo(log.Last + 1);
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
                if (keep >= log.Count)
                {
                    return 0;
                }

                last = log.Last;
            }

            return Compact(last - keep + 1);
        }

        var removed = RemovalBuffer.Rent();
        ulong purgedCount = 0;
        lock (gate)
        {
            ThrowIfClosed();
            var state = subjects.FilteredState(log.First, filter);
            if (state.Messages > 0 && (keep == 0 || keep < state.Messages))
            {
                var toPurge = keep > 0 ? state.Messages - keep : state.Messages;
                var last = sequence > 1 ? Math.Min(sequence - 1, state.Last) : state.Last;
                var literal = !Subjects.HasWildcard(filter);
                var tracked = Tracked(removed);
                for (var seq = state.First; seq <= last && purgedCount < toPurge; seq++)
                {
                    if (log.TryGet(seq, out var entry) && SubjectIndex.Matches(entry.Subject, filter, literal)
                        && log.Remove(seq, secureErase: false, subjects, tracked))
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

        ulong purged;
        ulong bytes;
        lock (gate)
        {
            ThrowIfClosed();
            if (log.First > sequence)
            {
                return 0;
            }

            if (sequence > log.Last)
            {
                // Past the end: empty, and the next append gets the requested sequence.
                purged = log.Count;
                bytes = log.Bytes;
                log.MoveLast(sequence - 1, log.LastTimestamp);
                ResetTo(sequence);
            }
            else
            {
                purged = log.RemoveBelow(sequence, subjects, out bytes);
            }
        }

        ReportBulk(purged, bytes);
        return purged;
    }

    public void Truncate(ulong sequence)
    {
        ulong purged;
        ulong bytes;
        lock (gate)
        {
            ThrowIfClosed();
            if (sequence == 0)
            {
                purged = log.Count;
                bytes = log.Bytes;
                log.MoveLast(0, 0);
                ResetTo(0);
            }
            else
            {
                purged = log.RemoveAbove(sequence, subjects, out bytes);
                age.Ttls?.ForgetAbove(sequence);
            }
        }

        ReportBulk(purged, bytes);
    }

    /// <summary>Drops every message and subject; <paramref name="nextFirst"/> becomes the first sequence.</summary>
    private void ResetTo(ulong nextFirst)
    {
        log.Reset(nextFirst);
        subjects.Clear();
        age.Ttls?.Clear();
    }
}
