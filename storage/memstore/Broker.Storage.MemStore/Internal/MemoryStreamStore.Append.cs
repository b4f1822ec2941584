using System.Buffers;
using Broker.Abstractions;

namespace Broker.Storage.MemStore.Internal;

/// <summary>Appends and the limits enforced on them (nats-server <c>storeRawMsg</c>, <c>enforce*Limit</c>).</summary>
internal sealed partial class MemoryStreamStore
{
    public StoreResult Store(ReadOnlySpan<byte> subject, in ReadOnlySequence<byte> headers, in ReadOnlySequence<byte> payload)
    {
        var headersLength = (int)headers.Length;
        var payloadLength = (int)payload.Length;
        var size = (ulong)(subject.Length + headersLength + payloadLength + 16);
        var removed = RemovalBuffer.Rent();
        ulong sequence;
        long timestamp;
        StorageUpdateHandler? handler;
        lock (gate)
        {
            if (closed)
            {
                RemovalBuffer.Return(removed);
                return new StoreResult(StoreStatus.Closed, 0, 0);
            }

            subjectsBySpan.TryGetValue(subject, out var record);
            if (config.Discard == DiscardPolicy.New && CheckDiscardNew(record, size) is { } refusal)
            {
                RemovalBuffer.Return(removed);
                return new StoreResult(refusal, 0, 0);
            }

            sequence = lastSequence + 1;
            timestamp = Math.Max(Now(), lastTimestamp);
            var data = headersLength + payloadLength == 0 ? [] : ArrayPool<byte>.Shared.Rent(headersLength + payloadLength);
            headers.CopyTo(data);
            payload.CopyTo(data.AsSpan(headersLength));

            if (messageCount == 0)
            {
                firstSequence = sequence;
                firstTimestamp = timestamp;
            }

            if (record is null)
            {
                record = new SubjectRecord(subject.ToArray()) { Messages = 1, First = sequence, Last = sequence };
                subjects.Add(record.Subject, record);
            }
            else
            {
                record.Messages++;
                record.Last = sequence;
                record.LastNeedsUpdate = false;
                if (record.Messages == 1)
                {
                    record.First = sequence;
                    record.FirstNeedsUpdate = false;
                }
            }

            messages.Add(sequence, new MessageEntry(record, data, headersLength, payloadLength, timestamp));
            messageCount++;
            byteCount += size;
            Volatile.Write(ref lastSequence, sequence);
            lastTimestamp = timestamp;

            EnforcePerSubjectLimit(record, removed);
            EnforceMessageLimit(removed);
            EnforceBytesLimit(removed);
            if (ageTimer is null && config.MaxAge > TimeSpan.Zero)
            {
                ScheduleAgeCheck();
            }

            handler = updates;
        }

        handler?.Invoke(1, (long)size, sequence, subject);
        ReportRemovals(removed);
        return new StoreResult(StoreStatus.Stored, sequence, timestamp);
    }

    public ulong Skip()
    {
        lock (gate)
        {
            ThrowIfClosed();
            var sequence = lastSequence + 1;
            Volatile.Write(ref lastSequence, sequence);
            lastTimestamp = Math.Max(Now(), lastTimestamp);
            if (messageCount == 0)
            {
                firstSequence = sequence + 1;
                firstTimestamp = 0;
            }

            return sequence;
        }
    }

    /// <summary>Why <see cref="DiscardPolicy.New"/> refuses a message, or null when it fits (nats-server's checks).</summary>
    private StoreStatus? CheckDiscardNew(SubjectRecord? record, ulong size)
    {
        // At the per-subject limit an append replaces the subject's oldest message, unless that is refused too.
        var atSubjectLimit = record is not null && config.MaxMessagesPerSubject > 0 && record.Messages >= (ulong)config.MaxMessagesPerSubject;
        if (atSubjectLimit && config.DiscardNewPerSubject)
        {
            return StoreStatus.MaxMessagesPerSubject;
        }

        if (config.MaxMessages > 0 && messageCount >= (ulong)config.MaxMessages && !atSubjectLimit)
        {
            return StoreStatus.MaxMessages;
        }

        if (config.MaxBytes > 0 && byteCount + size > (ulong)config.MaxBytes)
        {
            if (!atSubjectLimit)
            {
                return StoreStatus.MaxBytes;
            }

            // Dropping the subject's oldest message must make enough room.
            RecalculateFirstAndLast(record!);
            if (!messages.TryGetValue(record!.First, out var oldest) || oldest.Size < size)
            {
                return StoreStatus.MaxBytes;
            }
        }

        return null;
    }

    private void EnforcePerSubjectLimit(SubjectRecord record, RemovalBuffer removed)
    {
        var max = config.MaxMessagesPerSubject;
        if (max <= 0)
        {
            return;
        }

        while (record.Messages > (ulong)max)
        {
            RecalculateFirstAndLast(record);
            if (!RemoveLocked(record.First, secureErase: false, removed))
            {
                break;
            }
        }
    }

    private void EnforceMessageLimit(RemovalBuffer removed)
    {
        if (config.Discard != DiscardPolicy.Old || config.MaxMessages <= 0)
        {
            return;
        }

        while (messageCount > (ulong)config.MaxMessages && RemoveLocked(firstSequence, secureErase: false, removed))
        {
        }
    }

    private void EnforceBytesLimit(RemovalBuffer removed)
    {
        if (config.Discard != DiscardPolicy.Old || config.MaxBytes <= 0)
        {
            return;
        }

        while (byteCount > (ulong)config.MaxBytes && RemoveLocked(firstSequence, secureErase: false, removed))
        {
        }
    }
}
