using Broker.Storage.FileStore.Internal.Format;

namespace Broker.Storage.FileStore.Internal;

/// <summary>Why a message is removed: decides what is written (tombstone, head marker, erase) and whether the handler is told.</summary>
internal enum RemovalReason
{
    /// <summary>A limit (max_msgs, max_bytes, max_age, max_msgs_per_subject) or a purge.</summary>
    Limit,

    /// <summary>The engine asked (message delete, retention).</summary>
    Api,

    /// <summary>As <see cref="Api"/>, and the record's bytes are overwritten.</summary>
    Erase,

    /// <summary>Recovery re-applying a marker: nothing is written and nobody is told.</summary>
    Replay,
}

/// <summary>Removal: one message, purges, compact and truncate; per-subject bookkeeping; marker records.</summary>
internal sealed partial class FileStreamStore
{
    public bool Remove(ulong sequence, bool secureErase = false)
    {
        bool removed;
        lock (sync)
        {
            if (closed || failure is not null)
            {
                return false;
            }

            removed = RemoveLive(sequence, secureErase ? RemovalReason.Erase : RemovalReason.Api);
            if (removed)
            {
                ScheduleCommit();
            }
        }

        DrainRemovalEvents();
        return removed;
    }

    public ulong Purge()
    {
        ulong purged;
        long purgedBytes;
        lock (ioSync)
        {
            lock (sync)
            {
                if (closed || failure is not null)
                {
                    return 0;
                }

                purged = messages;
                purgedBytes = (long)bytes;
                foreach (var block in blocks)
                {
                    Retire(block);
                }

                blocks.Clear();
                tail = null;
                subjects.Clear();
                messages = 0;
                bytes = 0;
                first = last + 1;
                firstTimestamp = 0;
                headDirty = true;
                checkpointWanted = true;
                ScheduleCommit();
            }
        }

        if (purged > 0)
        {
            updates?.Invoke(-(long)purged, -purgedBytes, 0, []);
        }

        return purged;
    }

    public ulong Purge(string subject, ulong sequence, ulong keep)
    {
        var filter = System.Text.Encoding.UTF8.GetBytes(subject ?? "");
        if (sequence == 1)
        {
            return 0;
        }

        if (SubjectFilter.IsAll(filter))
        {
            if (keep == 0 && sequence == 0)
            {
                return Purge();
            }

            if (sequence > 1)
            {
                return Compact(sequence);
            }
        }

        ulong purged = 0;
        lock (sync)
        {
            if (closed || failure is not null)
            {
                return 0;
            }

            var allowed = ulong.MaxValue;
            if (keep > 0)
            {
                var matching = FilteredStateLocked(first, filter).Messages;
                if (keep >= matching)
                {
                    return 0;
                }

                allowed = matching - keep;
            }

            var stop = sequence > 0 ? Math.Min(sequence - 1, last) : last;
            for (var s = NextLiveSequence(first); s != 0 && s <= stop && purged < allowed; s = NextLiveSequence(s + 1))
            {
                var block = FindBlock(s)!;
                if (SubjectFilter.Matches(SubjectOf(block, s, out _), filter) && RemoveLive(s, RemovalReason.Limit))
                {
                    purged++;
                }
            }

            if (purged > 0)
            {
                ScheduleCommit();
            }
        }

        DrainRemovalEvents();
        return purged;
    }

    public ulong Compact(ulong sequence)
    {
        if (sequence == 0)
        {
            return Purge();
        }

        ulong purged = 0;
        lock (ioSync)
        {
            lock (sync)
            {
                if (closed || failure is not null)
                {
                    return 0;
                }

                if (sequence > last + 1)
                {
                    // Compacting past the end empties the stream and moves its sequence on (nats-server's behaviour).
                    WriteReservation(sequence - 1 + ReservationStep);
                    last = sequence - 1;
                }

                while (messages > 0 && first < sequence)
                {
                    if (!RemoveLive(first, RemovalReason.Limit))
                    {
                        break;
                    }

                    purged++;
                }

                if (messages == 0)
                {
                    first = last + 1;
                }

                headDirty = true;
                ScheduleCommit();
            }
        }

        DrainRemovalEvents();
        return purged;
    }

    public void Truncate(ulong sequence)
    {
        lock (ioSync)
        {
            lock (sync)
            {
                ThrowIfUnusable();
                if (sequence >= last)
                {
                    return;
                }

                TruncateState(sequence);

                // A marker in a fresh block: the old records above it stay on disk until their block goes, and
                // recovery (checkpoint or full scan) re-applies the marker; new appends never share a block with them.
                var block = NewTailBlock(RecordFormat.Overhead);
                AppendMarker(block, sequence, RecordKind.Truncate);
                WriteReservation(sequence + ReservationStep);
                checkpointWanted = true;
                ScheduleCommit();
            }
        }

        DrainRemovalEvents();
    }

    /// <summary>Removes every live message above <paramref name="sequence"/> and makes it the last. Caller holds <c>sync</c>.</summary>
    private void TruncateState(ulong sequence)
    {
        for (var i = blocks.Count - 1; i >= 0; i--)
        {
            var block = blocks[i];
            if (block.HasMessages && block.Last > sequence)
            {
                for (var s = block.PreviousLive(block.Last); s > sequence && s >= block.First; s = block.PreviousLive(s - 1))
                {
                    RemoveLive(s, RemovalReason.Replay);
                    if (s == block.First)
                    {
                        break;
                    }
                }

                if (block.First > sequence)
                {
                    block.First = sequence + 1;
                }

                block.Last = Math.Max(sequence, block.First - 1);
                if (block.Last < block.First)
                {
                    block.First = block.Last + 1;
                }
            }
            else if (!block.HasMessages && block.Last > sequence)
            {
                block.Last = sequence;
                block.First = sequence + 1;
            }
        }

        last = sequence;
        if (messages == 0)
        {
            first = last + 1;
            firstTimestamp = 0;
        }

        lastTimestamp = LastLiveTimestamp();
    }

    private long LastLiveTimestamp()
    {
        if (messages == 0)
        {
            return lastTimestamp;
        }

        var sequence = PreviousLiveSequence(last);
        var block = sequence == 0 ? null : FindBlock(sequence);
        return block is null ? lastTimestamp : TimestampOf(block, sequence);
    }

    /// <summary>
    /// Removes a live message: counters, per-subject state, the first sequence, and what must reach the disk
    /// (a tombstone, or a head marker when it was the first; an in-place overwrite for an erase).
    /// Caller holds <c>sync</c>. Returns false when it is not live.
    /// </summary>
    private bool RemoveLive(ulong sequence, RemovalReason reason)
    {
        var block = FindBlock(sequence);
        if (block is null || !block.IsLive(sequence))
        {
            return false;
        }

        var subject = SubjectOf(block, sequence, out var size);
        if (size == 0)
        {
            // The record is unreadable; loading the block has counted it lost.
            return false;
        }

        if (reason != RemovalReason.Replay && updates is not null)
        {
            RemovalEvents.Add(sequence, size, subject);
        }

        RemoveFromSubject(subject, sequence);
        var offset = block.OffsetOf(sequence);
        block.MarkNotLive(sequence);
        block.Messages--;
        block.Bytes -= size;
        messages--;
        bytes -= size;
        if (reason == RemovalReason.Erase)
        {
            EraseRecord(block, offset);
        }

        if (sequence == first)
        {
            AdvanceFirst();
            if (reason != RemovalReason.Replay)
            {
                headDirty = true;
            }
        }
        else if (reason != RemovalReason.Replay)
        {
            AppendMarker(ReserveTail(RecordFormat.Overhead), sequence, RecordKind.Tombstone);
        }

        return true;
    }

    private static void AppendMarker(MessageBlock block, ulong sequence, RecordKind kind)
    {
        var record = block.Cache.AsSpan((int)block.End, RecordFormat.Overhead);
        RecordFormat.WriteMarker(record, sequence, kind, NowNanoseconds(0));
        block.End += RecordFormat.Overhead;
        block.Markers++;
    }

    /// <summary>Overwrites a record's body with zeros in the cache and queues the rewrite of the file bytes.</summary>
    private void EraseRecord(MessageBlock block, uint offset)
    {
        var record = block.Cache.AsSpan((int)offset);
        var length = RecordFormat.PeekLength(record);
        record = record[..length];
        record[RecordFormat.HeaderSize..^4].Clear();
        RecordFormat.SetKind(record, RecordKind.Erased);
        if (offset < block.Flushed || block.Compressed)
        {
            pendingRewrites.Add((block, offset, length));
        }
    }

    /// <summary>Moves the first sequence to the next live message and retires blocks left wholly below it.</summary>
    private void AdvanceFirst()
    {
        if (messages == 0)
        {
            first = last + 1;
            firstTimestamp = 0;
        }
        else
        {
            var next = NextLiveSequence(first);
            first = next == 0 ? last + 1 : next;
            var block = next == 0 ? null : FindBlock(next);
            firstTimestamp = block is null ? 0 : TimestampOf(block, next);
        }

        while (blocks.Count > 0 && blocks[0] != tail && blocks[0].Last < first)
        {
            Retire(blocks[0]);
            blocks.RemoveAt(0);
        }
    }

    /// <summary>The first live sequence at or after <paramref name="from"/>, or 0.</summary>
    private ulong NextLiveSequence(ulong from)
    {
        var index = FindBlockIndex(from);
        if (index < 0)
        {
            // In a gap between blocks: start at the first block after it (a loop: a lambda capturing "from" would
            // allocate its closure on every call, this runs per message scanned).
            index = 0;
            while (index < blocks.Count && !(blocks[index].HasMessages && blocks[index].First > from))
            {
                index++;
            }
        }

        for (; index < blocks.Count; index++)
        {
            var found = blocks[index].NextLive(from);
            if (found != 0)
            {
                return found;
            }
        }

        return 0;
    }

    /// <summary>The last live sequence at or before <paramref name="from"/>, or 0.</summary>
    private ulong PreviousLiveSequence(ulong from)
    {
        for (var index = blocks.Count - 1; index >= 0; index--)
        {
            var block = blocks[index];
            if (!block.HasMessages || block.First > from)
            {
                continue;
            }

            var found = block.PreviousLive(from);
            if (found != 0)
            {
                return found;
            }
        }

        return 0;
    }

    private long TimestampOf(MessageBlock block, ulong sequence)
    {
        EnsureLoaded(block);
        var offset = block.OffsetOf(sequence);
        return offset == MessageBlock.NoOffset ? 0 : RecordFormat.ReadVerified(block.Cache.AsSpan((int)offset)).Timestamp;
    }

    private void RemoveFromSubject(ReadOnlySpan<byte> subject, ulong sequence)
    {
        var index = subjects.Find(subject);
        if (index < 0)
        {
            return;
        }

        ref var entry = ref subjects[index];
        if (--entry.Count == 0)
        {
            subjects.Remove(index);
            return;
        }

        if (entry.First == sequence)
        {
            entry.First = sequence + 1;
            entry.FirstStale = true;
        }

        if (entry.Count == 1)
        {
            if (entry.Last != sequence)
            {
                // The one left is the last.
                entry.First = entry.Last;
                entry.FirstStale = false;
            }
            else if (!entry.FirstStale)
            {
                entry.Last = entry.First;
            }
            else
            {
                entry.Last = entry.First = ScanSubject(entry.Subject, sequence - 1, entry.First, forward: false);
                entry.FirstStale = false;
            }
        }
        else if (entry.Last == sequence)
        {
            entry.Last = ScanSubject(entry.Subject, sequence - 1, entry.First, forward: false);
        }
    }

    /// <summary>The first sequence of a subject, looked up when it is stale. Caller holds <c>sync</c>.</summary>
    private ulong ResolveSubjectFirst(int index)
    {
        ref var entry = ref subjects[index];
        if (!entry.FirstStale)
        {
            return entry.First;
        }

        var found = entry.Count == 1 ? entry.Last : ScanSubject(entry.Subject, entry.First, entry.Last, forward: true);
        subjects[index].First = found;
        subjects[index].FirstStale = found == 0;
        return found;
    }

    /// <summary>The nearest live message of <paramref name="subject"/> from <paramref name="from"/> towards <paramref name="bound"/>, or 0.</summary>
    private ulong ScanSubject(byte[] subject, ulong from, ulong bound, bool forward)
    {
        var s = forward ? NextLiveSequence(from) : PreviousLiveSequence(from);
        while (s != 0 && (forward ? s <= bound : s >= bound))
        {
            var block = FindBlock(s)!;
            if (SubjectOf(block, s, out _).SequenceEqual(subject))
            {
                return s;
            }

            s = forward ? NextLiveSequence(s + 1) : (s > 1 ? PreviousLiveSequence(s - 1) : 0);
        }

        return 0;
    }
}
