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

    /// <summary>The size of the QoS 0 MQTT 3.1.1 PUBLISH of a message, or -1 when MQTT cannot carry it.</summary>
    public static long SizeV3(ReadOnlySpan<byte> subject, long payloadLength)
    {
        var remaining = 2L + TopicMapper.TopicLength(subject) + payloadLength;
        return remaining > PacketFramer.MaxRemainingLength ? -1 : PacketWriter.PacketSize((int)remaining);
    }

    /// <summary>A QoS 0 PUBLISH without properties (MQTT 3.1.1, and the header of MQTT 5 without them).</summary>
    public static void WriteV3(IBufferWriter<byte> output, ReadOnlySpan<byte> subject, in ReadOnlySequence<byte> payload, bool retain)
    {
        var topicLength = TopicMapper.TopicLength(subject);
        var payloadLength = (int)payload.Length;
        var remaining = 2 + topicLength + payloadLength;
        var size = PacketWriter.PacketSize(remaining);
        var inline = size <= SingleSpanLimit;
        var span = output.GetSpan(inline ? size : size - payloadLength);
        var writer = new PacketWriter(span);
        writer.WriteFixedHeader(PacketType.Publish, retain ? (byte)1 : (byte)0, remaining);
        writer.WriteUInt16((ushort)topicLength);
        writer.Advance(TopicMapper.ToTopic(subject, writer.Rest));
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
