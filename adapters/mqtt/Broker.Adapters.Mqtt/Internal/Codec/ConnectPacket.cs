using System.Text;

namespace Broker.Adapters.Mqtt.Internal.Codec;

/// <summary>
/// A decoded CONNECT (MQTT 3.1.1 or 5). <see cref="Parse"/> fills the fields in wire order and throws
/// <see cref="MqttProtocolException"/> at the first violation; what it read before (the protocol level, the client
/// id) stays set, so the caller can answer in the client's protocol.
/// </summary>
internal sealed class ConnectPacket
{
    private const byte FlagReserved = 0x01;
    private const byte FlagCleanStart = 0x02;
    private const byte FlagWill = 0x04;
    private const byte FlagWillQos = 0x18;
    private const byte FlagWillRetain = 0x20;
    private const byte FlagPassword = 0x40;
    private const byte FlagUserName = 0x80;

    /// <summary>The protocol level, or 0 before it was read.</summary>
    public byte Level { get; private set; }

    public bool IsV5 => Level == (byte)ProtocolLevel.V5;

    public bool CleanStart { get; private set; }

    /// <summary>Keep alive in seconds; 0 turns it off.</summary>
    public ushort KeepAlive { get; private set; }

    /// <summary>The client id as sent (possibly empty).</summary>
    public string ClientId { get; private set; } = string.Empty;

    public string? UserName { get; private set; }

    public byte[]? Password { get; private set; }

    public WillMessage? Will { get; private set; }

    /// <summary>MQTT 5 session expiry interval in seconds (0: ends with the connection; uint.MaxValue: never).</summary>
    public uint SessionExpiryInterval { get; private set; }

    /// <summary>How many QoS 1 and 2 publishes the client accepts unacknowledged. Default 65,535.</summary>
    public ushort ReceiveMaximum { get; private set; } = ushort.MaxValue;

    /// <summary>The largest packet the client accepts; 0 when it set no limit.</summary>
    public uint MaximumPacketSize { get; private set; }

    /// <summary>How many topic aliases the client accepts from the server. Default 0: none.</summary>
    public ushort TopicAliasMaximum { get; private set; }

    public bool RequestResponseInformation { get; private set; }

    /// <summary>Whether reason strings and user properties may be sent on acknowledgements. Default true.</summary>
    public bool RequestProblemInformation { get; private set; } = true;

    public string? AuthenticationMethod { get; private set; }

    public void Parse(ReadOnlySpan<byte> body)
    {
        var reader = new PacketReader(body);
        var name = reader.ReadBinary("protocol name");
        if (!name.SequenceEqual("MQTT"u8))
        {
            if (name.SequenceEqual("MQIsdp"u8))
            {
                // MQTT 3.1: answered in its own format with "unacceptable protocol version".
                Level = reader.ReadByte("protocol level");
                throw new MqttProtocolException(ReasonCode.UnsupportedProtocolVersion, $"older protocol \"MQIsdp\" not supported");
            }

            throw MqttProtocolException.Protocol($"expected connect packet with protocol name \"MQTT\", got \"{Encoding.UTF8.GetString(name)}\"");
        }

        Level = reader.ReadByte("protocol level");
        if (Level is not ((byte)ProtocolLevel.V311 or (byte)ProtocolLevel.V5))
        {
            throw new MqttProtocolException(ReasonCode.UnsupportedProtocolVersion, $"unacceptable protocol version of {Level}");
        }

        var flags = reader.ReadByte("flags");
        if ((flags & FlagReserved) != 0)
        {
            throw MqttProtocolException.Malformed("connect flags reserved bit not set to 0");
        }

        CleanStart = (flags & FlagCleanStart) != 0;
        var willQos = (byte)((flags & FlagWillQos) >> 3);
        var willRetain = (flags & FlagWillRetain) != 0;
        var hasWill = (flags & FlagWill) != 0;
        if (!hasWill)
        {
            if (willQos != 0)
            {
                throw MqttProtocolException.Malformed($"if Will flag is set to 0, Will QoS must be 0 too, got {willQos}");
            }

            if (willRetain)
            {
                throw MqttProtocolException.Malformed("if Will flag is set to 0, Will Retain flag must be 0 too");
            }
        }
        else if (willQos == 3)
        {
            throw MqttProtocolException.Malformed("if Will flag is set to 1, Will QoS can be 0, 1 or 2, got 3");
        }

        var hasUser = (flags & FlagUserName) != 0;
        var hasPassword = (flags & FlagPassword) != 0;
        if (!hasUser && hasPassword && !IsV5)
        {
            // MQTT 5 allows a password without a user name (MQTT-3.1.2-22 was dropped).
            throw MqttProtocolException.Malformed("password flag set but username flag is not");
        }

        KeepAlive = reader.ReadUInt16("keep alive");
        if (IsV5)
        {
            ReadProperties(ref reader);
        }

        ClientId = Encoding.UTF8.GetString(reader.ReadUtf8("client ID"));
        if (hasWill)
        {
            Will = WillMessage.Read(ref reader, IsV5, willQos, willRetain);
        }

        if (hasUser)
        {
            var user = reader.ReadUtf8("user name");
            UserName = Encoding.UTF8.GetString(user);
        }

        if (hasPassword)
        {
            Password = reader.ReadBinary("password").ToArray();
        }

        if (reader.HasMore)
        {
            throw MqttProtocolException.Malformed("unexpected bytes after the connect payload");
        }
    }

    private void ReadProperties(ref PacketReader reader)
    {
        var properties = new PropertyReader(ref reader);
        while (properties.MoveNext())
        {
            switch (properties.Current)
            {
                case PropertyId.SessionExpiryInterval:
                    SessionExpiryInterval = properties.ReadUInt32();
                    break;
                case PropertyId.ReceiveMaximum:
                    ReceiveMaximum = properties.ReadUInt16();
                    if (ReceiveMaximum == 0)
                    {
                        throw MqttProtocolException.Protocol("receive maximum of 0");
                    }

                    break;
                case PropertyId.MaximumPacketSize:
                    MaximumPacketSize = properties.ReadUInt32();
                    if (MaximumPacketSize == 0)
                    {
                        throw MqttProtocolException.Protocol("maximum packet size of 0");
                    }

                    break;
                case PropertyId.TopicAliasMaximum:
                    TopicAliasMaximum = properties.ReadUInt16();
                    break;
                case PropertyId.RequestResponseInformation:
                    RequestResponseInformation = ReadFlag(ref properties, "request response information");
                    break;
                case PropertyId.RequestProblemInformation:
                    RequestProblemInformation = ReadFlag(ref properties, "request problem information");
                    break;
                case PropertyId.UserProperty:
                    properties.ReadUserProperty(out _, out _);
                    break;
                case PropertyId.AuthenticationMethod:
                    AuthenticationMethod = Encoding.UTF8.GetString(properties.ReadUtf8());
                    break;
                case PropertyId.AuthenticationData:
                    properties.ReadBinary();
                    break;
                default:
                    throw properties.NotAllowed("CONNECT");
            }
        }
    }

    private static bool ReadFlag(ref PropertyReader properties, string name)
    {
        var value = properties.ReadByte();
        return value switch
        {
            0 => false,
            1 => true,
            _ => throw MqttProtocolException.Protocol($"{name} must be 0 or 1, got {value}"),
        };
    }
}
