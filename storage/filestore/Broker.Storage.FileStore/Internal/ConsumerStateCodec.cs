using Broker.Abstractions;
using Broker.Storage.FileStore.Internal.Format;

namespace Broker.Storage.FileStore.Internal;

/// <summary>
/// The binary encoding of <see cref="ConsumerState"/> and <see cref="ConsumerStoreConfig"/> in a consumer's files (the
/// state transitions themselves are the contract's, <see cref="ConsumerState.ApplyDelivered"/>).
/// </summary>
internal static class ConsumerStateCodec
{
    public static void Encode(BinaryBuilder builder, ConsumerState state)
    {
        builder.U64(state.Delivered.Consumer);
        builder.U64(state.Delivered.Stream);
        builder.U64(state.AckFloor.Consumer);
        builder.U64(state.AckFloor.Stream);
        // The counts first, so that an empty state's dictionaries are not made (ConsumerState makes them on first read).
        builder.I32(state.PendingCount);
        if (state.PendingCount > 0)
        {
            foreach (var (sequence, pending) in state.Pending)
            {
                builder.U64(sequence);
                builder.U64(pending.ConsumerSequence);
                builder.I64(pending.Timestamp);
            }
        }

        builder.I32(state.RedeliveredCount);
        if (state.RedeliveredCount > 0)
        {
            foreach (var (sequence, count) in state.Redelivered)
            {
                builder.U64(sequence);
                builder.U64(count);
            }
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
