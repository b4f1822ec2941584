using System.Buffers;
using Broker.Storage.FileStore.Internal.Format;
using Microsoft.Extensions.Logging;

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

/// <summary>
/// The stream's contents (nats-server's <c>fs.state</c> and the rules that keep it): the first and last sequence and
/// timestamp, the message and byte counts, the messages lost; appends and removals that keep the blocks, the
/// per-subject counters and these counters consistent, and the markers and rewrites a removal leaves for the disk
/// (a tombstone, a head marker, an erased record) until the committer takes them. Not thread-safe: the stream store's
/// lock guards every call.
/// </summary>
internal sealed partial class StreamLedger
{
    private readonly BlockSet blocks;
    private readonly SubjectCounters subjects;
    private readonly RecordCodec codec;
    private readonly ILogger logger;
    private readonly string name;
    private readonly List<(MessageBlock Block, uint Offset, int Length)> pendingRewrites = [];

    private ulong first = 1;
    private ulong last;
    private long firstTimestamp;
    private long lastTimestamp;
    private ulong messages;
    private ulong bytes;
    private ulong lost;
    private bool headDirty;

    public StreamLedger(BlockSet blocks, SubjectCounters subjects, RecordCodec codec, ILogger logger, string name)
    {
        this.blocks = blocks;
        this.subjects = subjects;
        this.codec = codec;
        this.logger = logger;
        this.name = name;
    }

    public ulong First => first;

    public ulong Last => last;

    public long FirstTimestamp => firstTimestamp;

    public long LastTimestamp => lastTimestamp;

    public ulong Messages => messages;

    public ulong Bytes => bytes;

    /// <summary>Messages found corrupt or missing on disk since the store opened (nats-server's <c>lost</c>).</summary>
    public ulong Lost => lost;

    /// <summary>Whether removals are reported to the storage update handler (one is registered).</summary>
    public bool ReportRemovals { get; set; }

    /// <summary>
    /// Told, under the lock, of a message <c>max_age</c> or its time to live is about to remove when it is the last of
    /// its subject (contract 1.4's subject expiries); true keeps it for the subject's delete marker, whose rollup
    /// removes it. Null while no handler wants them.
    /// </summary>
    public Func<ulong, bool>? ExpiringLast { get; set; }

    /// <summary>The first sequence moved: the next commit round writes a head marker.</summary>
    public bool HeadDirty => headDirty;

    /// <summary>Erased records whose flushed file bytes the next commit round overwrites.</summary>
    public int PendingRewrites => pendingRewrites.Count;

    /// <summary>Nanoseconds since the Unix epoch, never before <paramref name="notBefore"/>.</summary>
    public static long NowNanoseconds(long notBefore)
    {
        var now = (DateTime.UtcNow.Ticks - DateTime.UnixEpoch.Ticks) * 100;
        return now > notBefore ? now : notBefore;
    }

    /// <summary>
    /// Appends a message record with the next sequence to the tail block's cache and counts it; returns the sequence.
    /// The caller has checked the limits and the sequence reservation. A <paramref name="requestedTimestamp"/> above 0 is
    /// kept (raised to the last timestamp, so timestamps never go back); 0 takes the current time. A
    /// <paramref name="timeToLive"/> other than zero is written as a <see cref="RecordKind.Ttl"/> record just before
    /// the message, in the same block.
    /// </summary>
    public ulong Append(ReadOnlySpan<byte> subject, in ReadOnlySequence<byte> headers, in ReadOnlySequence<byte> payload, int recordLength, ulong accounted, long requestedTimestamp, out long timestamp, TimeSpan timeToLive = default)
    {
        var sequence = last + 1;
        timestamp = requestedTimestamp > 0 ? Math.Max(requestedTimestamp, lastTimestamp) : NowNanoseconds(lastTimestamp);
        var withTtl = timeToLive != TimeSpan.Zero;
        var block = blocks.ReserveTail(recordLength + (withTtl ? RecordFormat.Overhead : 0), last);
        if (withTtl)
        {
            AppendTtl(block, sequence, MessageTtlIndex.ExpiresAt(timestamp, timeToLive));
        }

        var record = block.Cache.AsSpan((int)block.End, recordLength);
        RecordFormat.WriteHeader(record, sequence, RecordKind.Message, timestamp, subject.Length, (int)headers.Length);
        codec.WriteBody(block, record, subject, headers, payload);
        RecordFormat.Seal(record);
        Appended(block, sequence, timestamp, recordLength, accounted);
        subjects.Add(subject, sequence);
        return sequence;
    }

    /// <summary>Updates the block and stream counters for a message record just written (or replayed) at the block's end.</summary>
    public void Appended(MessageBlock block, ulong sequence, long timestamp, int recordLength, ulong accounted)
    {
        if (!block.HasMessages)
        {
            block.First = sequence;
            block.FirstTimestamp = timestamp;
        }
        else
        {
            // Sequences skipped since the block's last message are in its range but not live.
            for (var gap = block.Last + 1; gap < sequence; gap++)
            {
                block.SetOffset(gap, MessageBlock.NoOffset);
                block.MarkNotLive(gap);
            }
        }

        block.Last = sequence;
        block.LastTimestamp = timestamp;
        block.SetOffset(sequence, (uint)block.End);
        block.End += recordLength;
        block.Messages++;
        block.Bytes += accounted;
        if (messages == 0)
        {
            first = sequence;
            firstTimestamp = timestamp;
        }

        last = sequence;
        lastTimestamp = timestamp;
        messages++;
        bytes += accounted;
    }

    /// <summary>Takes the next sequence without a message. Nothing is written: the checkpoint keeps the last sequence and the reservation covers a crash.</summary>
    public ulong Skip()
    {
        var sequence = ++last;
        lastTimestamp = NowNanoseconds(lastTimestamp);
        if (messages == 0)
        {
            first = last + 1;
        }

        var tail = blocks.Tail;
        if (tail is not null && !tail.HasMessages)
        {
            tail.First = last + 1;
            tail.Last = last;
        }

        return sequence;
    }

    /// <summary>
    /// Removes a live message: counters, per-subject state, the first sequence, and what must reach the disk
    /// (a tombstone, or a head marker when it was the first; an in-place overwrite for an erase).
    /// Returns false when it is not live.
    /// </summary>
    public bool RemoveLive(ulong sequence, RemovalReason reason)
    {
        var block = blocks.Find(sequence);
        if (block is null || !block.IsLive(sequence))
        {
            return false;
        }

        var subject = blocks.SubjectOf(block, sequence, out var size);
        if (size == 0)
        {
            // The record is unreadable; loading the block has counted it lost.
            return false;
        }

        if (reason != RemovalReason.Replay && ReportRemovals)
        {
            RemovalEvents.Add(sequence, size, subject);
        }

        subjects.Remove(subject, sequence);
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
            AppendMarker(blocks.ReserveTail(RecordFormat.Overhead, last), sequence, RecordKind.Tombstone);
        }

        return true;
    }

    /// <summary>Removes every message (a purge); returns how many and their bytes. Their blocks go with the next checkpoint.</summary>
    public (ulong Messages, ulong Bytes) RemoveAll()
    {
        var removed = (messages, bytes);
        blocks.RetireAll();
        subjects.Clear();
        ttls?.Clear();
        messages = 0;
        bytes = 0;
        first = last + 1;
        firstTimestamp = 0;
        headDirty = true;
        return removed;
    }

    /// <summary>Removes up to <paramref name="allowed"/> messages matching a filter, oldest first, up to <paramref name="stop"/>; returns how many.</summary>
    public ulong RemoveMatching(ReadOnlySpan<byte> filter, ulong stop, ulong allowed)
    {
        ulong purged = 0;
        for (var s = blocks.NextLive(first); s != 0 && s <= stop && purged < allowed; s = blocks.NextLive(s + 1))
        {
            if (SubjectFilter.Matches(blocks.SubjectOf(blocks.Find(s)!, s, out _), filter) && RemoveLive(s, RemovalReason.Limit))
            {
                purged++;
            }
        }

        return purged;
    }

    /// <summary>
    /// Removes every message below <paramref name="sequence"/>; compacting past the end empties the stream and moves
    /// its last sequence on (nats-server's behaviour; the caller has reserved it). Returns how many were removed.
    /// </summary>
    public ulong RemoveBelow(ulong sequence)
    {
        if (sequence > last + 1)
        {
            last = sequence - 1;
        }

        ulong purged = 0;
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
        return purged;
    }

    /// <summary>
    /// Truncates to <paramref name="sequence"/> (below the last) and writes the truncate marker in a fresh block: the old
    /// records above it stay on disk until their block goes, and recovery (checkpoint or full scan) re-applies the
    /// marker; new appends never share a block with them.
    /// </summary>
    public void Truncate(ulong sequence)
    {
        TruncateState(sequence);
        AppendMarker(blocks.NewTail(RecordFormat.Overhead, last), sequence, RecordKind.Truncate);
    }

    /// <summary>Removes every live message above <paramref name="sequence"/> and makes it the last.</summary>
    public void TruncateState(ulong sequence)
    {
        ttls?.ForgetAbove(sequence);
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

    /// <summary>Appends the head marker the moved first sequence needs, if any (the commit round, before it takes its bytes).</summary>
    public void WriteHeadMarker()
    {
        if (headDirty && last > 0)
        {
            AppendMarker(blocks.ReserveTail(RecordFormat.Overhead, last), first, RecordKind.Head);
        }

        headDirty = false;
    }

    /// <summary>Takes the queued rewrites of erased records whose bytes the file already holds, copying their new bytes.</summary>
    public void TakeRewrites(List<(MessageBlock Block, long Offset, byte[] Bytes)> rewrites)
    {
        foreach (var (block, offset, length) in pendingRewrites)
        {
            if (block.Cache is not null && blocks.Contains(block) && offset + length <= block.Flushed)
            {
                rewrites.Add((block, offset, block.Cache.AsSpan((int)offset, length).ToArray()));
            }
        }

        pendingRewrites.Clear();
    }

    /// <summary>A block's file was rewritten (compaction) from its cache, erased records included: no rewrite is owed.</summary>
    public void ForgetRewrites(MessageBlock block) => pendingRewrites.RemoveAll(r => r.Block == block);

    private static void AppendMarker(MessageBlock block, ulong sequence, RecordKind kind, long timestamp = 0)
    {
        var record = block.Cache.AsSpan((int)block.End, RecordFormat.Overhead);
        RecordFormat.WriteMarker(record, sequence, kind, timestamp == 0 ? NowNanoseconds(0) : timestamp);
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
            var next = blocks.NextLive(first);
            first = next == 0 ? last + 1 : next;
            var block = next == 0 ? null : blocks.Find(next);
            firstTimestamp = block is null ? 0 : blocks.TimestampOf(block, next);
        }

        blocks.RetireBelow(first);
    }

    private long LastLiveTimestamp()
    {
        if (messages == 0)
        {
            return lastTimestamp;
        }

        var sequence = blocks.PreviousLive(last);
        var block = sequence == 0 ? null : blocks.Find(sequence);
        return block is null ? lastTimestamp : blocks.TimestampOf(block, sequence);
    }
}
