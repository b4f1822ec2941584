namespace Broker.Adapters.Mqtt.Internal.Codec;

/// <summary>
/// A decoded PUBLISH: spans into the packet body, no copies. Valid until the connection's read loop moves on.
/// </summary>
internal ref struct PublishPacket
{
    public byte Qos;

    public bool Retain;

    public bool Duplicate;

    /// <summary>The topic as sent; empty when an MQTT 5 topic alias stands for it.</summary>
    public ReadOnlySpan<byte> Topic;

    public ushort PacketId;

    public MessageProperties Properties;

    public ReadOnlyMemory<byte> Payload;

    /// <summary>Decodes the variable header of a PUBLISH whose fixed header flags are <paramref name="flags"/>.</summary>
    public static PublishPacket Parse(byte flags, ReadOnlyMemory<byte> body, bool v5)
    {
        var packet = default(PublishPacket);
        packet.Qos = (byte)((flags >> 1) & 0x03);
        packet.Retain = (flags & 0x01) != 0;
        packet.Duplicate = (flags & 0x08) != 0;
        if (packet.Qos == 3)
        {
            throw MqttProtocolException.Malformed("QoS=3 is invalid in MQTT");
        }

        if (packet.Qos == 0 && packet.Duplicate)
        {
            throw MqttProtocolException.Malformed("DUP flag set on a QoS 0 PUBLISH");
        }

        var reader = new PacketReader(body.Span);
        packet.Topic = reader.ReadUtf8("topic");
        if (packet.Qos > 0)
        {
            packet.PacketId = reader.ReadUInt16("packet identifier");
            if (packet.PacketId == 0)
            {
                throw MqttProtocolException.Malformed($"with QoS={packet.Qos}, packet identifier cannot be 0");
            }
        }

        if (v5)
        {
            var properties = new PropertyReader(ref reader);
            packet.Properties = MessageProperties.Read(ref properties, will: false);
        }

        packet.Payload = body[reader.Position..];
        return packet;
    }
}
