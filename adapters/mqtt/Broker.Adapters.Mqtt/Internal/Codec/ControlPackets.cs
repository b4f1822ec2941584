using System.Buffers;
using System.Text;

namespace Broker.Adapters.Mqtt.Internal.Codec;

/// <summary>What CONNACK tells an MQTT 5 client besides the reason code (properties left at their default are omitted).</summary>
internal sealed record ConnAckProperties
{
    public ushort ReceiveMaximum { get; init; } = ushort.MaxValue;

    public uint MaximumPacketSize { get; init; }

    public ushort TopicAliasMaximum { get; init; }

    public string? AssignedClientIdentifier { get; init; }

    public ushort? ServerKeepAlive { get; init; }

    public string? ReasonString { get; init; }

    /// <summary>Maximum QoS the client may publish with; 2 (the default) is not sent.</summary>
    public byte MaximumQos { get; init; } = 2;

    public bool RetainAvailable { get; init; } = true;
}

/// <summary>
/// Encodes the packets the broker sends besides PUBLISH, straight into the connection's output. Sizes are computed
/// first, so each packet is one <see cref="IBufferWriter{T}.GetSpan"/> and one advance.
/// </summary>
internal static class ControlPackets
{
    public static void WritePingResp(IBufferWriter<byte> output)
    {
        var span = output.GetSpan(2);
        span[0] = (byte)PacketType.PingResp << 4;
        span[1] = 0;
        output.Advance(2);
    }

    /// <summary>
    /// PUBACK, PUBREC, PUBREL or PUBCOMP; MQTT 5 omits a success reason code, as the specification allows, and may carry
    /// a reason string (<paramref name="reasonString"/>, UTF-8, checked against the client's limits by the caller).
    /// </summary>
    public static void WriteAck(IBufferWriter<byte> output, PacketType type, ushort packetId, bool v5, byte reason = ReasonCode.Success, byte[]? reasonString = null)
    {
        var withReason = v5 && (reason != ReasonCode.Success || reasonString is not null);
        var propertiesLength = v5 && reasonString is not null ? 3 + reasonString.Length : 0;
        var remaining = (withReason ? 3 : 2) + (propertiesLength > 0 ? PacketWriter.VariableIntSize(propertiesLength) + propertiesLength : 0);
        var span = output.GetSpan(PacketWriter.PacketSize(remaining));
        var writer = new PacketWriter(span);
        writer.WriteFixedHeader(type, type == PacketType.PubRel ? (byte)0x02 : (byte)0, remaining);
        writer.WriteUInt16(packetId);
        if (withReason)
        {
            writer.WriteByte(reason);
        }

        if (propertiesLength > 0)
        {
            writer.WriteVariableInt(propertiesLength);
            writer.WriteByte(PropertyId.ReasonString);
            writer.WriteBinary(reasonString);
        }

        output.Advance(writer.Written);
    }

    public static void WriteConnAckV3(IBufferWriter<byte> output, bool sessionPresent, byte returnCode)
    {
        var span = output.GetSpan(4);
        span[0] = (byte)PacketType.ConnAck << 4;
        span[1] = 2;
        span[2] = (byte)(sessionPresent && returnCode == 0 ? 1 : 0);
        span[3] = returnCode;
        output.Advance(4);
    }

    public static void WriteConnAckV5(IBufferWriter<byte> output, bool sessionPresent, byte reason, ConnAckProperties properties)
    {
        var assigned = properties.AssignedClientIdentifier is { } id ? Encoding.UTF8.GetBytes(id) : null;
        var reasonString = ReasonBytes(properties.ReasonString);
        var propertiesLength = 0;
        if (properties.ReceiveMaximum != ushort.MaxValue)
        {
            propertiesLength += 3;
        }

        if (properties.MaximumPacketSize != 0)
        {
            propertiesLength += 5;
        }

        if (properties.TopicAliasMaximum != 0)
        {
            propertiesLength += 3;
        }

        if (assigned is not null)
        {
            propertiesLength += 3 + assigned.Length;
        }

        if (properties.ServerKeepAlive is not null)
        {
            propertiesLength += 3;
        }

        if (properties.MaximumQos < 2)
        {
            propertiesLength += 2;
        }

        if (!properties.RetainAvailable)
        {
            propertiesLength += 2;
        }

        if (reasonString is not null)
        {
            propertiesLength += 3 + reasonString.Length;
        }

        var remaining = 2 + PacketWriter.VariableIntSize(propertiesLength) + propertiesLength;
        var span = output.GetSpan(PacketWriter.PacketSize(remaining));
        var writer = new PacketWriter(span);
        writer.WriteFixedHeader(PacketType.ConnAck, 0, remaining);
        writer.WriteByte((byte)(sessionPresent && reason == ReasonCode.Success ? 1 : 0));
        writer.WriteByte(reason);
        writer.WriteVariableInt(propertiesLength);
        if (properties.ReceiveMaximum != ushort.MaxValue)
        {
            writer.WriteByte(PropertyId.ReceiveMaximum);
            writer.WriteUInt16(properties.ReceiveMaximum);
        }

        if (properties.MaximumPacketSize != 0)
        {
            writer.WriteByte(PropertyId.MaximumPacketSize);
            writer.WriteUInt32(properties.MaximumPacketSize);
        }

        if (properties.TopicAliasMaximum != 0)
        {
            writer.WriteByte(PropertyId.TopicAliasMaximum);
            writer.WriteUInt16(properties.TopicAliasMaximum);
        }

        if (assigned is not null)
        {
            writer.WriteByte(PropertyId.AssignedClientIdentifier);
            writer.WriteBinary(assigned);
        }

        if (properties.ServerKeepAlive is { } keepAlive)
        {
            writer.WriteByte(PropertyId.ServerKeepAlive);
            writer.WriteUInt16(keepAlive);
        }

        if (properties.MaximumQos < 2)
        {
            writer.WriteByte(PropertyId.MaximumQos);
            writer.WriteByte(properties.MaximumQos);
        }

        if (!properties.RetainAvailable)
        {
            writer.WriteByte(PropertyId.RetainAvailable);
            writer.WriteByte(0);
        }

        if (reasonString is not null)
        {
            writer.WriteByte(PropertyId.ReasonString);
            writer.WriteBinary(reasonString);
        }

        output.Advance(writer.Written);
    }

    /// <summary>SUBACK (<paramref name="unsubscribe"/> false) or UNSUBACK with one code per filter (3.1.1 UNSUBACK has none).</summary>
    public static void WriteSubAck(IBufferWriter<byte> output, ushort packetId, ReadOnlySpan<byte> codes, bool v5, bool unsubscribe, byte[]? reasonString = null)
    {
        var reason = v5 ? reasonString : null;
        var propertiesLength = reason is null ? 0 : 3 + reason.Length;
        var withCodes = v5 || !unsubscribe;
        var remaining = 2 + (v5 ? PacketWriter.VariableIntSize(propertiesLength) + propertiesLength : 0) + (withCodes ? codes.Length : 0);
        var span = output.GetSpan(PacketWriter.PacketSize(remaining));
        var writer = new PacketWriter(span);
        writer.WriteFixedHeader(unsubscribe ? PacketType.UnsubAck : PacketType.SubAck, 0, remaining);
        writer.WriteUInt16(packetId);
        if (v5)
        {
            writer.WriteVariableInt(propertiesLength);
            if (reason is not null)
            {
                writer.WriteByte(PropertyId.ReasonString);
                writer.WriteBinary(reason);
            }
        }

        if (withCodes)
        {
            writer.WriteBytes(codes);
        }

        output.Advance(writer.Written);
    }

    /// <summary>An MQTT 5 DISCONNECT from the server with a reason code and an optional reason string.</summary>
    public static void WriteDisconnect(IBufferWriter<byte> output, byte reason, string? reasonString, uint maximumPacketSize)
    {
        var text = ReasonBytes(reasonString);
        if (text is not null && maximumPacketSize != 0 && 7 + text.Length > maximumPacketSize)
        {
            // The client's maximum packet size wins over the reason string (MQTT-3.14.2-3).
            text = null;
        }

        var propertiesLength = text is null ? 0 : 3 + text.Length;
        var remaining = 1 + PacketWriter.VariableIntSize(propertiesLength) + propertiesLength;
        var span = output.GetSpan(PacketWriter.PacketSize(remaining));
        var writer = new PacketWriter(span);
        writer.WriteFixedHeader(PacketType.Disconnect, 0, remaining);
        writer.WriteByte(reason);
        writer.WriteVariableInt(propertiesLength);
        if (text is not null)
        {
            writer.WriteByte(PropertyId.ReasonString);
            writer.WriteBinary(text);
        }

        output.Advance(writer.Written);
    }

    /// <summary>A reason string as UTF-8, at most 1 KiB; null for none.</summary>
    public static byte[]? ReasonBytes(string? reason)
    {
        if (string.IsNullOrEmpty(reason))
        {
            return null;
        }

        var bytes = Encoding.UTF8.GetBytes(reason);
        return bytes.Length <= 1024 ? bytes : bytes[..1024];
    }
}
