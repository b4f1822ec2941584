namespace Broker.Adapters.Mqtt.Internal.Codec;

/// <summary>
/// Walks an MQTT 5 property block: <see cref="MoveNext"/> yields each identifier, then the caller reads its value
/// with the typed method. A property given twice is a protocol error (MQTT-2.2.2-2), except user properties and
/// subscription identifiers, which may repeat.
/// </summary>
internal ref struct PropertyReader
{
    private PacketReader reader;
    private ulong seen;

    /// <summary>Reads the block's length from <paramref name="outer"/> and takes the block from it.</summary>
    public PropertyReader(scoped ref PacketReader outer)
    {
        var length = outer.ReadVariableInt("properties length");
        Block = outer.ReadBytes(length, "properties");
        reader = new PacketReader(Block);
        seen = 0;
        Current = 0;
    }

    /// <summary>Walks a block read earlier.</summary>
    public PropertyReader(ReadOnlySpan<byte> block)
    {
        Block = block;
        reader = new PacketReader(block);
        seen = 0;
        Current = 0;
    }

    /// <summary>The whole block, without its length.</summary>
    public ReadOnlySpan<byte> Block { get; }

    public byte Current { get; private set; }

    public bool MoveNext()
    {
        if (!reader.HasMore)
        {
            return false;
        }

        var id = reader.ReadVariableInt("property identifier");
        if (id is <= 0 or > 0x2A)
        {
            throw MqttProtocolException.Malformed($"unknown property identifier 0x{id:x2}");
        }

        Current = (byte)id;
        if (id is not (PropertyId.UserProperty or PropertyId.SubscriptionIdentifier))
        {
            var bit = 1UL << id;
            if ((seen & bit) != 0)
            {
                throw MqttProtocolException.Protocol($"property 0x{id:x2} given twice");
            }

            seen |= bit;
        }

        return true;
    }

    public byte ReadByte() => reader.ReadByte("property");

    public ushort ReadUInt16() => reader.ReadUInt16("property");

    public uint ReadUInt32() => reader.ReadUInt32("property");

    public int ReadVariableInt() => reader.ReadVariableInt("property");

    public ReadOnlySpan<byte> ReadBinary() => reader.ReadBinary("property");

    public ReadOnlySpan<byte> ReadUtf8() => reader.ReadUtf8("property");

    public void ReadUserProperty(out ReadOnlySpan<byte> name, out ReadOnlySpan<byte> value)
    {
        name = reader.ReadUtf8("user property name");
        value = reader.ReadUtf8("user property value");
    }

    /// <summary>Refuses a property the packet may not carry (a protocol error, MQTT-2.2.2).</summary>
    public readonly MqttProtocolException NotAllowed(string packet)
        => MqttProtocolException.Protocol($"property 0x{Current:x2} is not allowed in {packet}");
}
