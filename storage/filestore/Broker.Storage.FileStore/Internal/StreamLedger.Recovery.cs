using Broker.Storage.FileStore.Internal.Format;

namespace Broker.Storage.FileStore.Internal;

/// <summary>Recovery: the counters restored from a checkpoint, markers replayed, the reservation applied; messages found lost.</summary>
internal sealed partial class StreamLedger
{
    /// <summary>Restores the counters from a checkpoint.</summary>
    public void Restore(ulong first, ulong last, long firstTimestamp, long lastTimestamp, ulong messages, ulong bytes, ulong lost)
    {
        this.first = first;
        this.last = last;
        this.firstTimestamp = firstTimestamp;
        this.lastTimestamp = lastTimestamp;
        this.messages = messages;
        this.bytes = bytes;
        this.lost = lost;
    }

    /// <summary>A live message whose record is corrupt or missing: it is removed from the state and counted lost.</summary>
    public void LoseMessage(MessageBlock block, ulong sequence)
    {
        block.MarkNotLive(sequence);
        block.Messages--;
        messages--;
        lost++;

        // Its subject is unknown: the per-subject counters are rebuilt at the next maintenance tick.
        subjects.MarkSuspect();
        FileStoreLog.MessageLost(logger, name, sequence, block.Id);
        if (sequence == first)
        {
            AdvanceFirst();
        }
    }

    /// <summary>Replays an erased record: its sequence is in the block's range, not live.</summary>
    public void ReplayErased(MessageBlock block, in RecordHeader header)
    {
        if (!block.HasMessages)
        {
            block.First = header.Sequence;
            block.FirstTimestamp = header.Timestamp;
        }

        for (var gap = block.Last + 1; gap <= header.Sequence; gap++)
        {
            block.SetOffset(gap, MessageBlock.NoOffset);
            block.MarkNotLive(gap);
        }

        block.Last = header.Sequence;
        block.LastTimestamp = header.Timestamp;
        last = header.Sequence;
        lastTimestamp = Math.Max(lastTimestamp, header.Timestamp);
        if (messages == 0)
        {
            first = last + 1;
        }
    }

    /// <summary>Replays a head marker: every message below <paramref name="sequence"/> is gone.</summary>
    public void ReplayHead(ulong sequence)
    {
        while (messages > 0 && first < sequence)
        {
            if (!RemoveLive(first, RemovalReason.Replay))
            {
                break;
            }
        }

        if (sequence > last + 1)
        {
            last = sequence - 1;
        }

        if (messages == 0)
        {
            first = last + 1;
        }
    }

    /// <summary>
    /// The end of a recovery: after a crash, sequences up to the durable <paramref name="reservation"/> may have been
    /// handed out, so the last sequence moves up to it (they are skipped rather than reused).
    /// </summary>
    public void Recovered(ulong reservation)
    {
        if (reservation > last)
        {
            last = reservation;
            lastTimestamp = Math.Max(lastTimestamp, NowNanoseconds(0));
        }

        if (messages == 0)
        {
            first = last + 1;
            firstTimestamp = 0;
        }
    }
}
