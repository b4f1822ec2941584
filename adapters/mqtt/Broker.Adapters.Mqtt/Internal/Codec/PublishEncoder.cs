using System.Buffers;
using Broker.Adapters.Mqtt.Internal.Topics;

namespace Broker.Adapters.Mqtt.Internal.Codec;

/// <summary>
/// Writes a PUBLISH for a NATS message straight into an output: the topic is converted from the subject while it is
/// copied, the payload follows. One span for packets up to <see cref="SingleSpanLimit"/>; larger payloads are copied a
/// segment at a time. Nothing is allocated.
/// </summary>
internal static class PublishEncoder
{
    /// <summary>Packets up to this size are formatted in one span.</summary>
    public const int SingleSpanLimit = 16 * 1024;

    /// <summary>Whether an MQTT 3.1.1 PUBLISH can carry the message at any QoS (its packet identifier counted): its size, or -1.</summary>
    public static long SizeV3(ReadOnlySpan<byte> subject, long payloadLength)
    {
        var remaining = 2L + TopicMapper.TopicLength(subject) + 2 + payloadLength;
        return remaining > PacketFramer.MaxRemainingLength ? -1 : PacketWriter.PacketSize((int)remaining);
    }

    /// <summary>The fixed header flags of a PUBLISH: DUP, QoS and RETAIN (MQTT 3.3.1).</summary>
    public static byte Flags(bool retain, byte qos, bool dup) => (byte)((dup ? 8 : 0) | (qos << 1) | (retain ? 1 : 0));

    /// <summary>
    /// A PUBLISH without properties (MQTT 3.1.1): QoS 0, or QoS 1 and 2 with their packet identifier and DUP flag.
    /// </summary>
    public static void WriteV3(IBufferWriter<byte> output, ReadOnlySpan<byte> subject, in ReadOnlySequence<byte> payload, bool retain, byte qos = 0, ushort packetId = 0, bool dup = false)
    {
        var topicLength = TopicMapper.TopicLength(subject);
        var payloadLength = (int)payload.Length;
        var remaining = 2 + topicLength + (qos > 0 ? 2 : 0) + payloadLength;
        var size = PacketWriter.PacketSize(remaining);
        var inline = size <= SingleSpanLimit;
        var span = output.GetSpan(inline ? size : size - payloadLength);
        var writer = new PacketWriter(span);
        writer.WriteFixedHeader(PacketType.Publish, Flags(retain, qos, dup), remaining);
        writer.WriteUInt16((ushort)topicLength);
        writer.Advance(TopicMapper.ToTopic(subject, writer.Rest));
        if (qos > 0)
        {
            writer.WriteUInt16(packetId);
        }
        if (inline)
        {
            payload.CopyTo(writer.Rest);
            writer.Advance(payloadLength);
            output.Advance(writer.Written);
            return;
        }

        output.Advance(writer.Written);
        WriteSequence(output, payload);
    }

    /// <summary>Copies a large payload into the output a segment at a time.</summary>
    public static void WriteSequence(IBufferWriter<byte> output, in ReadOnlySequence<byte> sequence)
    {
        foreach (var segment in sequence)
        {
            output.Write(segment.Span);
        }
    }
}
