using System.Buffers;
using Broker.Abstractions;

namespace Broker.JetStream.Internal.Snapshots;

/// <summary>
/// A consumer's state as nats-server keeps it in <c>obs/&lt;consumer&gt;/o.dat</c> (store.go
/// <c>encodeConsumerState</c>, filestore.go <c>decodeConsumerState</c>): magic 22 and version 2, then as varints the
/// ack floor and delivered pairs (consumer, stream), the pending deliveries relative to the ack floors with their
/// times in seconds below a base time, and the redelivery counts. Version 1 (older servers) is read too.
/// </summary>
internal static class ConsumerStateCodec
{
    private const long NanosecondsPerSecond = 1_000_000_000;

    public static byte[] Encode(ConsumerState state, long nowNanoseconds)
    {
        var buffer = new ArrayBufferWriter<byte>(64 + (state.Pending.Count * 30) + (state.Redelivered.Count * 20));
        buffer.Write<byte>([MessageBlockWriter.Magic, 2]);
        Varint.WriteUnsigned(buffer, state.AckFloor.Consumer);
        Varint.WriteUnsigned(buffer, state.AckFloor.Stream);
        Varint.WriteUnsigned(buffer, state.Delivered.Consumer);
        Varint.WriteUnsigned(buffer, state.Delivered.Stream);
        Varint.WriteUnsigned(buffer, (ulong)state.Pending.Count);
        if (state.Pending.Count > 0)
        {
            // nats-server's base: now rounded to the second; each time is stored as seconds below it.
            var baseSeconds = (nowNanoseconds + (NanosecondsPerSecond / 2)) / NanosecondsPerSecond;
            Varint.WriteSigned(buffer, baseSeconds);
            foreach (var (sequence, pending) in state.Pending)
            {
                Varint.WriteUnsigned(buffer, sequence - state.AckFloor.Stream);
                Varint.WriteUnsigned(buffer, pending.ConsumerSequence - state.AckFloor.Consumer);
                Varint.WriteSigned(buffer, baseSeconds - (pending.Timestamp / NanosecondsPerSecond));
            }
        }

        Varint.WriteUnsigned(buffer, (ulong)state.Redelivered.Count);
        foreach (var (sequence, count) in state.Redelivered)
        {
            Varint.WriteUnsigned(buffer, sequence - state.AckFloor.Stream);
            Varint.WriteUnsigned(buffer, count);
        }

        return buffer.WrittenSpan.ToArray();
    }

    /// <exception cref="InvalidDataException">The state is corrupt or of an unknown version.</exception>
    public static ConsumerState Decode(ReadOnlySpan<byte> data)
    {
        if (data.Length < 2 || data[0] != MessageBlockWriter.Magic || data[1] is not (1 or 2))
        {
            throw new InvalidDataException("corrupt consumer state");
        }

        var version = data[1];
        var at = 2;
        var ackFloor = new SequencePair(Next(data, ref at), Next(data, ref at));
        var delivered = new SequencePair(Next(data, ref at), Next(data, ref at));
        if (version == 1)
        {
            // Version 1 stored the next to deliver.
            delivered = new SequencePair(
                ackFloor.Consumer > 1 ? delivered.Consumer + ackFloor.Consumer - 1 : delivered.Consumer,
                ackFloor.Stream > 1 ? delivered.Stream + ackFloor.Stream - 1 : delivered.Stream);
        }

        var state = new ConsumerState { AckFloor = ackFloor, Delivered = delivered };
        var pendingCount = Next(data, ref at);
        if (pendingCount > 0)
        {
            var baseSeconds = NextSigned(data, ref at);
            for (ulong i = 0; i < pendingCount; i++)
            {
                var sequence = Next(data, ref at) + ackFloor.Stream;
                var consumerSequence = version == 2 ? Next(data, ref at) + ackFloor.Consumer : 0;
                var seconds = NextSigned(data, ref at);
                var timestamp = version == 1 ? (seconds + baseSeconds) * NanosecondsPerSecond : (baseSeconds - seconds) * NanosecondsPerSecond;
                state.Pending[sequence] = new PendingDelivery(consumerSequence, timestamp);
            }
        }

        var redeliveredCount = Next(data, ref at);
        for (ulong i = 0; i < redeliveredCount; i++)
        {
            var sequence = Next(data, ref at);
            var count = Next(data, ref at);
            if (sequence > 0 && count > 0)
            {
                state.Redelivered[sequence + ackFloor.Stream] = count;
            }
        }

        return state;
    }

    private static ulong Next(ReadOnlySpan<byte> data, ref int at) =>
        Varint.TryReadUnsigned(data, ref at, out var value) ? value : throw new InvalidDataException("corrupt consumer state");

    private static long NextSigned(ReadOnlySpan<byte> data, ref int at) =>
        Varint.TryReadSigned(data, ref at, out var value) ? value : throw new InvalidDataException("corrupt consumer state");
}
