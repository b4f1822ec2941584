namespace Broker.Adapters.Mqtt.Internal.Codec;

/// <summary>PUBACK, PUBREC, PUBREL, PUBCOMP and DISCONNECT bodies, which the adapter receives as a client's answers.</summary>
internal static class AckPacket
{
    /// <summary>Reads the packet identifier and, in MQTT 5, the optional reason code and properties.</summary>
    public static ushort Parse(ReadOnlySpan<byte> body, bool v5, out byte reason)
    {
        var reader = new PacketReader(body);
        var packetId = reader.ReadUInt16("packet identifier");
        if (packetId == 0)
        {
            throw MqttProtocolException.Malformed("packet identifier cannot be 0");
        }

        reason = ReasonCode.Success;
        if (!v5)
        {
            if (reader.HasMore)
            {
                throw MqttProtocolException.Malformed($"invalid remaining length {body.Length}");
            }

            return packetId;
        }

        if (reader.HasMore)
        {
            reason = reader.ReadByte("reason code");
        }

        if (reader.HasMore)
        {
            SkipProperties(ref reader, "acknowledgement");
        }

        return packetId;
    }

    /// <summary>An MQTT 5 DISCONNECT: reason code and the session expiry interval it may set.</summary>
    public static byte ParseDisconnect(ReadOnlySpan<byte> body, bool v5, out uint? sessionExpiry)
    {
        sessionExpiry = null;
        if (!v5)
        {
            if (!body.IsEmpty)
            {
                throw MqttProtocolException.Malformed($"invalid remaining length {body.Length} for DISCONNECT");
            }

            return ReasonCode.Success;
        }

        var reader = new PacketReader(body);
        var reason = reader.HasMore ? reader.ReadByte("reason code") : ReasonCode.Success;
        if (reader.HasMore)
        {
            sessionExpiry = SkipProperties(ref reader, "DISCONNECT", sessionExpiryAllowed: true);
        }

        return reason;
    }

    /// <summary>Reads the reason string and user properties an acknowledgement may carry (and DISCONNECT's session expiry).</summary>
    private static uint? SkipProperties(ref PacketReader reader, string packet, bool sessionExpiryAllowed = false)
    {
        uint? sessionExpiry = null;
        var properties = new PropertyReader(ref reader);
        while (properties.MoveNext())
        {
            switch (properties.Current)
            {
                case PropertyId.SessionExpiryInterval when sessionExpiryAllowed:
                    sessionExpiry = properties.ReadUInt32();
                    break;
                case PropertyId.ReasonString:
                    properties.ReadUtf8();
                    break;
                case PropertyId.UserProperty:
                    properties.ReadUserProperty(out _, out _);
                    break;
                default:
                    throw properties.NotAllowed(packet);
            }
        }

        return sessionExpiry;
    }
}
