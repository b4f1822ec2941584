using System.Buffers;
using Broker.Abstractions;
using Broker.Storage.FileStore.Internal.Format;

namespace Broker.Storage.FileStore.Internal;

/// <summary>The contract's writes: append, skip, remove, purges, compact and truncate.</summary>
internal sealed partial class FileStreamStore
{
    public StoreResult Store(ReadOnlySpan<byte> subject, in ReadOnlySequence<byte> headers, in ReadOnlySequence<byte> payload) =>
        Store(subject, headers, payload, default);

    public StoreResult Store(ReadOnlySpan<byte> subject, in ReadOnlySequence<byte> headers, in ReadOnlySequence<byte> payload, in StoreOptions options)
    {
        var accounted = RecordFormat.AccountedSize(subject.Length, (int)headers.Length, (int)payload.Length);
        var recordLength = RecordFormat.MessageLength(subject.Length, (int)headers.Length, (int)payload.Length, key is not null);
        StoreResult result;
        bool writeTail;
        lock (sync)
        {
            if (committer.Closed)
            {
                return new StoreResult(StoreStatus.Closed, 0, 0);
            }

            if (committer.Failed)
            {
                return new StoreResult(StoreStatus.Failed, 0, 0);
            }

            if (recordLength > RecordFormat.MaxRecordLength || subject.Length > ushort.MaxValue)
            {
                return new StoreResult(StoreStatus.MessageTooLarge, 0, 0);
            }

            var refused = ledger.CheckDiscardNew(config, subject, accounted);
            if (refused != StoreStatus.Stored)
            {
                return new StoreResult(refused, 0, 0);
            }

            if (!committer.AwaitReservation(ledger.Last + 1))
            {
                return new StoreResult(committer.Closed ? StoreStatus.Closed : StoreStatus.Failed, 0, 0);
            }

            var sequence = ledger.Append(subject, headers, payload, recordLength, accounted, options.Timestamp, out var timestamp, options.TimeToLive);
            ledger.EnforceLimitsAfterAppend(config, subject);
            result = new StoreResult(StoreStatus.Stored, sequence, timestamp);
            writeTail = committer.Appended();
        }

        if (writeTail)
        {
            committer.WriteTail();
        }

        updates?.Invoke(1, (long)accounted, result.Sequence, subject);
        DrainRemovalEvents();
        return result;
    }

    public ulong Skip()
    {
        ulong sequence;
        lock (sync)
        {
            if (committer.Closed || committer.Failed)
            {
                return 0;
            }

            if (!committer.AwaitReservation(ledger.Last + 1))
            {
                return 0;
            }

            sequence = ledger.Skip();
            committer.ScheduleCommit();
        }

        return sequence;
    }

    public bool Remove(ulong sequence, bool secureErase = false)
    {
        bool removed;
        lock (sync)
        {
            if (committer.Closed || committer.Failed)
            {
                return false;
            }

            removed = ledger.RemoveLive(sequence, secureErase ? RemovalReason.Erase : RemovalReason.Api);
            if (removed)
            {
                committer.ScheduleCommit();
            }
        }

        DrainRemovalEvents();
        return removed;
    }

    public ulong Purge()
    {
        ulong purged;
        ulong purgedBytes;
        lock (ioSync)
        {
            lock (sync)
            {
                if (committer.Closed || committer.Failed)
                {
                    return 0;
                }

                (purged, purgedBytes) = ledger.RemoveAll();
                checkpoints.Request();
                committer.ScheduleCommit();
            }
        }

        if (purged > 0)
        {
            updates?.Invoke(-(long)purged, -(long)purgedBytes, 0, []);
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

        ulong purged;
        lock (sync)
        {
            if (committer.Closed || committer.Failed)
            {
                return 0;
            }

            var allowed = ulong.MaxValue;
            if (keep > 0)
            {
                var matching = FilteredStateLocked(ledger.First, filter).Messages;
                if (keep >= matching)
                {
                    return 0;
                }

                allowed = matching - keep;
            }

            purged = ledger.RemoveMatching(filter, sequence > 0 ? Math.Min(sequence - 1, ledger.Last) : ledger.Last, allowed);
            if (purged > 0)
            {
                committer.ScheduleCommit();
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

        ulong purged;
        lock (ioSync)
        {
            lock (sync)
            {
                if (committer.Closed || committer.Failed)
                {
                    return 0;
                }

                if (sequence > ledger.Last + 1)
                {
                    // Compacting past the end moves the stream's sequence on: reserve it before any append can use it.
                    committer.Reserve(sequence - 1 + SequenceReservation.Step);
                }

                purged = ledger.RemoveBelow(sequence);
                committer.ScheduleCommit();
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
                if (sequence >= ledger.Last)
                {
                    return;
                }

                ledger.Truncate(sequence);
                committer.Reserve(sequence + SequenceReservation.Step);
                checkpoints.Request();
                committer.ScheduleCommit();
            }
        }

        DrainRemovalEvents();
    }
}
