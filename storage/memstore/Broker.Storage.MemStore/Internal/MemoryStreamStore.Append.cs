using System.Buffers;
using Broker.Abstractions;

namespace Broker.Storage.MemStore.Internal;

/// <summary>Appends (nats-server <c>storeRawMsg</c>, <c>SkipMsg</c>): checked and enforced by <see cref="StreamLimits"/>.</summary>
internal sealed partial class MemoryStreamStore
{
    public StoreResult Store(ReadOnlySpan<byte> subject, in ReadOnlySequence<byte> headers, in ReadOnlySequence<byte> payload) =>
        Store(subject, headers, payload, default);

    public StoreResult Store(ReadOnlySpan<byte> subject, in ReadOnlySequence<byte> headers, in ReadOnlySequence<byte> payload, in StoreOptions options)
    {
        var size = (ulong)(subject.Length + (int)headers.Length + (int)payload.Length + 16);
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

            var record = subjects.Find(subject);
            if (limits.CheckDiscardNew(record, size) is { } refusal)
            {
                RemovalBuffer.Return(removed);
                return new StoreResult(refusal, 0, 0);
            }

            sequence = log.Last + 1;
            timestamp = options.Timestamp > 0 ? Math.Max(options.Timestamp, log.LastTimestamp) : log.NextTimestamp();
            record = subjects.Add(subject, record, sequence);
            log.Append(sequence, timestamp, record, headers, payload, size);

            var maxAge = limits.Config.MaxAge;
            if (options.TimeToLive != TimeSpan.Zero)
            {
                // The timer is re-armed when this one expires sooner than whatever it waits for.
                var ttls = age.EnsureTtls();
                var next = ttls.NextExpiry;
                ttls.Add(sequence, timestamp, options.TimeToLive);
                if (ttls.NextExpiry < next)
                {
                    age.Schedule(maxAge, closed);
                }
            }

            limits.EnforceAfterAppend(record, Tracked(removed));
            if (!age.IsArmed && maxAge > TimeSpan.Zero)
            {
                age.Schedule(maxAge, closed);
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
            return log.Skip();
        }
    }
}
