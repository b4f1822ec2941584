using Broker.Abstractions;
using Broker.JetStream.Internal.Api;
using Broker.JetStream.Internal.Models;
using Broker.JetStream.Internal.Streams;

namespace Broker.JetStream.Internal;

/// <summary>The account's JetStream limits checked on stream and consumer creation (nats-server 2.9.10's order and errors).</summary>
internal sealed partial class JetStreamAccount
{
    /// <summary>
    /// nats-server <c>jsNonClusteredStreamLimitsCheck</c>, before the stream is looked up: <c>max_streams</c> (10027)
    /// and a stream <c>max_consumers</c> above the account's (10026).
    /// </summary>
    public void CheckStreamCount(StreamConfig config)
    {
        var current = limits;
        if (current.MaxStreams > 0 && StreamCount >= current.MaxStreams)
        {
            throw new ApiException(ApiErrors.MaximumStreamsLimit);
        }

        if (config.MaxConsumers > 0 && current.MaxConsumers > 0 && config.MaxConsumers > current.MaxConsumers)
        {
            throw new ApiException(ApiErrors.MaximumConsumersLimit);
        }
    }

    /// <summary>
    /// nats-server <c>checkStreamCfg</c>'s account part: <c>max_bytes_required</c> (10113) and the medium's
    /// <c>*_max_stream_bytes</c> (10122).
    /// </summary>
    public void CheckStreamBytes(StreamConfig config)
    {
        var current = limits;
        var limit = config.Storage == "memory" ? current.MemoryMaxStreamBytes : current.StorageMaxStreamBytes;
        if (current.MaxBytesRequired && config.MaxBytes <= 0)
        {
            throw new ApiException(ApiErrors.StreamMaxBytesRequired);
        }

        if (limit > 0 && config.MaxBytes > limit)
        {
            throw new ApiException(ApiErrors.StreamMaxStreamBytesExceeded);
        }
    }

    /// <summary>
    /// nats-server <c>checkBytesLimits</c>'s account part: the stream's <c>max_bytes</c> (1 when unlimited) beside
    /// the other streams' reservations within the account's <c>max_memory</c>/<c>max_store</c> (10028, 10047).
    /// </summary>
    public void CheckReservation(StorageMedium medium, long maxBytes, long alreadyReserved = 0)
    {
        var current = limits;
        var add = maxBytes < 0 ? 1 : maxBytes;
        if (medium == StorageMedium.Memory)
        {
            if (current.MaxMemory >= 0 && MemoryReserved - alreadyReserved + add > current.MaxMemory)
            {
                throw new ApiException(ApiErrors.MemoryResourcesExceeded);
            }
        }
        else if (current.MaxStorage >= 0 && StorageReserved - alreadyReserved + add > current.MaxStorage)
        {
            throw new ApiException(ApiErrors.StorageResourcesExceeded);
        }
    }

    /// <summary>
    /// The most consumers a stream of the account may have (nats-server <c>addConsumer</c>): the stream's
    /// <c>max_consumers</c>, or the account's when the stream sets none or the account's is lower; 0 for no limit.
    /// </summary>
    public int MaxConsumersOf(StreamConfig stream)
    {
        var account = limits.MaxConsumers;
        var max = stream.MaxConsumers;
        return max <= 0 || (account > 0 && account < max) ? Math.Max(account, 0) : max;
    }

    /// <summary>The account's <c>max_ack_pending</c>, 0 when it sets none.</summary>
    public int MaxAckPending => Math.Max(limits.MaxAckPending, 0);
}
