using System.Buffers;
using Broker.Abstractions;
using Broker.Storage.FileStore.Internal.Format;

namespace Broker.Storage.FileStore.Internal;

/// <summary>Appending: encode the record into the tail block's cache, update the state, enforce the limits.</summary>
internal sealed partial class FileStreamStore
{
    public StoreResult Store(ReadOnlySpan<byte> subject, in ReadOnlySequence<byte> headers, in ReadOnlySequence<byte> payload)
    {
        var headersLength = (int)headers.Length;
        var payloadLength = (int)payload.Length;
        var accounted = RecordFormat.AccountedSize(subject.Length, headersLength, payloadLength);
        var recordLength = RecordFormat.MessageLength(subject.Length, headersLength, payloadLength, key is not null);
        StoreResult result;
        lock (sync)
        {
            if (closed)
            {
                return new StoreResult(StoreStatus.Closed, 0, 0);
            }

            if (failure is not null)
            {
                return new StoreResult(StoreStatus.Failed, 0, 0);
            }

            if (recordLength > RecordFormat.MaxRecordLength || subject.Length > ushort.MaxValue)
            {
                return new StoreResult(StoreStatus.MessageTooLarge, 0, 0);
            }

            var refused = CheckDiscardNew(subject, accounted);
            if (refused != StoreStatus.Stored)
            {
                return new StoreResult(refused, 0, 0);
            }

            if (!AwaitReservation(last + 1))
            {
                return new StoreResult(closed ? StoreStatus.Closed : StoreStatus.Failed, 0, 0);
            }

            var sequence = last + 1;
            var timestamp = NowNanoseconds(lastTimestamp);
            var block = ReserveTail(recordLength);
            var record = block.Cache.AsSpan((int)block.End, recordLength);
            RecordFormat.WriteHeader(record, sequence, RecordKind.Message, timestamp, subject.Length, headersLength);
            WriteBody(block, record, subject, headers, payload);
            RecordFormat.Seal(record);
            AppendedMessage(block, sequence, timestamp, recordLength, accounted);
            AddToSubject(subject, sequence);
            EnforceLimitsAfterAppend(subject);
            result = new StoreResult(StoreStatus.Stored, sequence, timestamp);
            appendsSinceRound++;
            ScheduleCommit();
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
            if (closed || failure is not null)
            {
                return 0;
            }

            if (!AwaitReservation(last + 1))
            {
                return 0;
            }

            sequence = ++last;
            lastTimestamp = NowNanoseconds(lastTimestamp);
            if (messages == 0)
            {
                first = last + 1;
            }

            // Nothing is written: the checkpoint keeps the last sequence and the reservation covers a crash.
            if (tail is not null && !tail.HasMessages)
            {
                tail.First = last + 1;
                tail.Last = last;
            }

            ScheduleCommit();
        }

        return sequence;
    }

    private static long NowNanoseconds(long notBefore)
    {
        var now = (DateTime.UtcNow.Ticks - DateTime.UnixEpoch.Ticks) * 100;
        return now > notBefore ? now : notBefore;
    }

    private void WriteBody(MessageBlock block, Span<byte> record, ReadOnlySpan<byte> subject, in ReadOnlySequence<byte> headers, in ReadOnlySequence<byte> payload)
    {
        var body = record[RecordFormat.HeaderSize..^4];
        if (block.Cipher is null)
        {
            subject.CopyTo(body);
            headers.CopyTo(body[subject.Length..]);
            payload.CopyTo(body[(subject.Length + (int)headers.Length)..]);
            return;
        }

        var plainLength = body.Length - RecordFormat.CipherOverhead;
        if (scratch.Length < plainLength)
        {
            scratch = new byte[Math.Max(plainLength, scratch.Length * 2)];
        }

        var plain = scratch.AsSpan(0, plainLength);
        subject.CopyTo(plain);
        headers.CopyTo(plain[subject.Length..]);
        payload.CopyTo(plain[(subject.Length + (int)headers.Length)..]);
        var nonce = body[..RecordFormat.NonceSize];
        block.Cipher.NextNonce(nonce);
        block.Cipher.Encrypt(nonce, plain, body.Slice(RecordFormat.NonceSize, plainLength), body[^RecordFormat.TagSize..], record[..RecordFormat.HeaderSize]);
    }

    /// <summary>Updates the block and stream counters for a message record just written at the block's end.</summary>
    private void AppendedMessage(MessageBlock block, ulong sequence, long timestamp, int recordLength, ulong accounted)
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

    private void AddToSubject(ReadOnlySpan<byte> subject, ulong sequence)
    {
        var index = subjects.GetOrAdd(subject);
        ref var entry = ref subjects[index];
        if (entry.Count == 0)
        {
            entry.First = sequence;
            entry.FirstStale = false;
        }

        entry.Count++;
        entry.Last = sequence;
    }

    /// <summary>Under <see cref="DiscardPolicy.New"/>, whether a message may be stored; the limit status when not.</summary>
    private StoreStatus CheckDiscardNew(ReadOnlySpan<byte> subject, ulong accounted)
    {
        if (config.MaxBytes > 0 && accounted > (ulong)config.MaxBytes)
        {
            return config.Discard == DiscardPolicy.New ? StoreStatus.MaxBytes : StoreStatus.MessageTooLarge;
        }

        if (config.Discard != DiscardPolicy.New)
        {
            return StoreStatus.Stored;
        }

        // At its own per-subject limit the append replaces that subject's oldest, so the stream does not grow
        // (nats-server: discard new refuses only what would grow the stream past max_msgs or max_bytes).
        var replacesOwn = false;
        var replacedSize = 0UL;
        if (config.MaxMessagesPerSubject > 0)
        {
            var index = subjects.Find(subject);
            if (index >= 0 && subjects[index].Count >= (ulong)config.MaxMessagesPerSubject)
            {
                if (config.DiscardNewPerSubject)
                {
                    return StoreStatus.MaxMessagesPerSubject;
                }

                replacesOwn = true;
                var oldest = ResolveSubjectFirst(index);
                var block = oldest == 0 ? null : FindBlock(oldest);
                if (block is not null)
                {
                    SubjectOf(block, oldest, out replacedSize);
                }
            }
        }

        if (config.MaxMessages > 0 && messages >= (ulong)config.MaxMessages && !replacesOwn)
        {
            return StoreStatus.MaxMessages;
        }

        if (config.MaxBytes > 0 && bytes + accounted > (ulong)config.MaxBytes && (!replacesOwn || replacedSize < accounted))
        {
            return StoreStatus.MaxBytes;
        }

        return StoreStatus.Stored;
    }

    /// <summary>After an append: the subject's oldest beyond its limit go, then the stream's oldest beyond its limits.</summary>
    private void EnforceLimitsAfterAppend(ReadOnlySpan<byte> subject)
    {
        if (config.MaxMessagesPerSubject > 0)
        {
            var index = subjects.Find(subject);
            while (index >= 0 && subjects[index].Count > (ulong)config.MaxMessagesPerSubject)
            {
                var oldest = ResolveSubjectFirst(index);
                if (oldest == 0 || !RemoveLive(oldest, RemovalReason.Limit))
                {
                    break;
                }

                index = subjects.Find(subject);
            }
        }

        EnforceStreamLimits();
    }

    /// <summary>Removes the oldest messages while the stream is over <c>max_msgs</c> or <c>max_bytes</c> (discard old).</summary>
    private void EnforceStreamLimits()
    {
        if (config.Discard == DiscardPolicy.New)
        {
            return;
        }

        while (messages > 0
               && ((config.MaxMessages > 0 && messages > (ulong)config.MaxMessages)
                   || (config.MaxBytes > 0 && bytes > (ulong)config.MaxBytes)))
        {
            if (!RemoveLive(first, RemovalReason.Limit))
            {
                break;
            }
        }
    }
}
