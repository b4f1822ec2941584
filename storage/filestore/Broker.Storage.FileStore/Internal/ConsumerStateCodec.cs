using Broker.Abstractions;
using Broker.Storage.FileStore.Internal.Format;

namespace Broker.Storage.FileStore.Internal;

/// <summary>
/// The consumer state transitions of nats-server's <c>consumerFileStore</c> (UpdateDelivered, UpdateAcks) and the binary
/// encoding of <see cref="ConsumerState"/> and <see cref="ConsumerStoreConfig"/>.
/// </summary>
internal static class ConsumerStateCodec
{
    public static void ApplyDelivered(ConsumerState state, ConsumerAckPolicy policy, int maxDeliver, ulong consumerSequence, ulong streamSequence, ulong deliveryCount, long timestamp)
    {
        if (deliveryCount != 1 && policy == ConsumerAckPolicy.None)
        {
            return;
        }

        // A replay of something already below the ack floor changes nothing.
        if (consumerSequence <= state.AckFloor.Consumer)
        {
            return;
        }

        if (policy == ConsumerAckPolicy.None)
        {
            var delivered = state.Delivered;
            var floor = state.AckFloor;
            if (consumerSequence > delivered.Consumer)
            {
                delivered = delivered with { Consumer = consumerSequence };
                floor = floor with { Consumer = consumerSequence };
            }

            if (streamSequence > delivered.Stream)
            {
                delivered = delivered with { Stream = streamSequence };
                floor = floor with { Stream = streamSequence };
            }

            state.Delivered = delivered;
            state.AckFloor = floor;
            return;
        }

        if (streamSequence <= state.Delivered.Stream)
        {
            if (state.Pending.TryGetValue(streamSequence, out var pending))
            {
                // The original delivery sequence stays; only the time moves.
                state.Pending[streamSequence] = pending with { Timestamp = timestamp };
            }
        }
        else
        {
            state.Pending[streamSequence] = new PendingDelivery(consumerSequence, timestamp);
        }

        state.Delivered = new SequencePair(Math.Max(state.Delivered.Consumer, consumerSequence), Math.Max(state.Delivered.Stream, streamSequence));
        if (deliveryCount > 1)
        {
            if (maxDeliver > 0 && deliveryCount > (ulong)maxDeliver)
            {
                state.Pending.Remove(streamSequence);
            }

            if (!state.Redelivered.TryGetValue(streamSequence, out var count) || count < deliveryCount - 1)
            {
                state.Redelivered[streamSequence] = deliveryCount - 1;
            }
        }
    }

    /// <summary>Returns false when nothing changed (the delivery was not pending).</summary>
    public static bool ApplyAck(ConsumerState state, ConsumerAckPolicy policy, ulong consumerSequence, ulong streamSequence)
    {
        if (policy == ConsumerAckPolicy.None)
        {
            return false;
        }

        var changed = state.Redelivered.Remove(streamSequence);
        if (consumerSequence <= state.AckFloor.Consumer || !state.Pending.ContainsKey(streamSequence))
        {
            return changed;
        }

        if (policy == ConsumerAckPolicy.All)
        {
            state.AckFloor = new SequencePair(consumerSequence, streamSequence);
            foreach (var sequence in state.Pending.Keys.Where(s => s <= streamSequence).ToList())
            {
                state.Pending.Remove(sequence);
                state.Redelivered.Remove(sequence);
            }

            return true;
        }

        if (state.Pending.Remove(streamSequence, out var pending) && consumerSequence > pending.ConsumerSequence && pending.ConsumerSequence > 0)
        {
            consumerSequence = pending.ConsumerSequence;
        }

        if (state.Pending.Count == 0)
        {
            state.AckFloor = state.Delivered;
        }
        else if (consumerSequence == state.AckFloor.Consumer + 1)
        {
            state.AckFloor = new SequencePair(consumerSequence, streamSequence);
            if (state.Delivered.Consumer > consumerSequence)
            {
                for (var s = streamSequence + 1; s <= state.Delivered.Stream; s++)
                {
                    if (state.Pending.TryGetValue(s, out var next))
                    {
                        if (next.ConsumerSequence > 0)
                        {
                            state.AckFloor = new SequencePair(next.ConsumerSequence - 1, s - 1);
                        }

                        break;
                    }
                }
            }
        }

        return true;
    }

    public static void Encode(BinaryBuilder builder, ConsumerState state)
    {
        builder.U64(state.Delivered.Consumer);
        builder.U64(state.Delivered.Stream);
        builder.U64(state.AckFloor.Consumer);
        builder.U64(state.AckFloor.Stream);
        builder.I32(state.Pending.Count);
        foreach (var (sequence, pending) in state.Pending)
        {
            builder.U64(sequence);
            builder.U64(pending.ConsumerSequence);
            builder.I64(pending.Timestamp);
        }

        builder.I32(state.Redelivered.Count);
        foreach (var (sequence, count) in state.Redelivered)
        {
            builder.U64(sequence);
            builder.U64(count);
        }
    }

    public static ConsumerState Decode(ReadOnlySpan<byte> data)
    {
        var parser = new BinaryParser(data);
        var state = new ConsumerState
        {
            Delivered = new SequencePair(parser.U64(), parser.U64()),
            AckFloor = new SequencePair(parser.U64(), parser.U64()),
        };
        var pending = parser.I32();
        for (var i = 0; i < pending; i++)
        {
            var sequence = parser.U64();
            state.Pending[sequence] = new PendingDelivery(parser.U64(), parser.I64());
        }

        var redelivered = parser.I32();
        for (var i = 0; i < redelivered; i++)
        {
            var sequence = parser.U64();
            state.Redelivered[sequence] = parser.U64();
        }

        return state;
    }

    public static byte[] EncodeConfig(ConsumerStoreConfig config)
    {
        var builder = new BinaryBuilder();
        builder.Text(config.Name);
        builder.U8((byte)config.AckPolicy);
        builder.I32(config.MaxDeliver);
        builder.U8(config.MemoryOnly ? (byte)1 : (byte)0);
        builder.U8(config.Durable ? (byte)1 : (byte)0);
        builder.Bytes(config.Metadata.Span);
        return builder.Written.ToArray();
    }

    public static ConsumerStoreConfig DecodeConfig(ReadOnlySpan<byte> data)
    {
        var parser = new BinaryParser(data);
        return new ConsumerStoreConfig
        {
            Name = parser.Text(),
            AckPolicy = (ConsumerAckPolicy)parser.U8(),
            MaxDeliver = parser.I32(),
            MemoryOnly = parser.U8() != 0,
            Durable = parser.U8() != 0,
            Metadata = parser.Bytes(),
        };
    }
}
