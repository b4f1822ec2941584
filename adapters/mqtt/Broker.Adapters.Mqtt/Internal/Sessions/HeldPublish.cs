namespace Broker.Adapters.Mqtt.Internal.Sessions;

/// <summary>
/// An incoming QoS 2 PUBLISH of a persistent session held from PUBREC to PUBREL, the specification's method A as
/// nats-server runs it: stored in <c>$MQTT_qos2in</c> before PUBREC and delivered when PUBREL comes, so a resend after
/// a restart is recognised and the message goes out once. Kept in the session's memory too, so PUBREL needs no read.
/// </summary>
internal sealed class HeldPublish
{
    private HeldPublish(ushort packetId, byte[] data)
    {
        PacketId = packetId;
        Data = data;
    }

    public ushort PacketId { get; }

    /// <summary>
    /// As stored: the protocol level (4 or 5), the PUBLISH flags without DUP, then its body with the topic resolved
    /// (an MQTT 5 topic alias replaced by its topic). Empty for a record of an identifier alone (written before held
    /// messages), which is released without a delivery.
    /// </summary>
    public byte[] Data { get; }

    /// <summary>The record's stream sequence in <c>$MQTT_qos2in</c>, 0 until stored or when unknown.</summary>
    public ulong Sequence { get; set; }

    /// <summary>The write of the record, which its removal waits for; <see langword="null"/> for a record read back.</summary>
    public Task? Stored { get; set; }

    public bool HasMessage => Data.Length > 2;

    public bool V5 => Data[0] == 5;

    public byte Flags => Data[1];

    public ReadOnlyMemory<byte> Body => Data.AsMemory(2);

    /// <summary>
    /// The id under which its delivery is stored in <c>$MQTT_msgs</c> (<c>Nats-Msg-Id</c>): a PUBREL sent again after
    /// a crash between that store and the record's removal delivers it again, and JetStream's duplicate window drops
    /// the second copy for QoS 1 and 2 subscribers.
    /// </summary>
    public string? MessageId => Sequence == 0 ? null : MessageIdPrefix + Sequence.ToString(System.Globalization.CultureInfo.InvariantCulture);

    /// <summary>The prefix of <see cref="MessageId"/>, which deliveries do not show as a user property.</summary>
    public const string MessageIdPrefix = "$MQTT.qos2in.";

    /// <summary>A record read back from the store.</summary>
    public static HeldPublish FromStored(ushort packetId, byte[] data, ulong sequence) => new(packetId, data) { Sequence = sequence };

    /// <summary>
    /// A publish as it came: <paramref name="body"/> the packet's body, <paramref name="topic"/> its topic (an alias
    /// resolved when <paramref name="aliased"/>, the body's topic then empty).
    /// </summary>
    public static HeldPublish Create(ushort packetId, bool v5, byte flags, ReadOnlySpan<byte> body, ReadOnlySpan<byte> topic, bool aliased)
    {
        var extra = aliased ? topic.Length : 0;
        var data = new byte[2 + body.Length + extra];
        data[0] = v5 ? (byte)5 : (byte)4;
        data[1] = (byte)(flags & 0x07);
        if (!aliased)
        {
            body.CopyTo(data.AsSpan(2));
            return new HeldPublish(packetId, data);
        }

        // The body starts with the empty topic's length (0): the topic goes in its place.
        data[2] = (byte)(topic.Length >> 8);
        data[3] = (byte)topic.Length;
        topic.CopyTo(data.AsSpan(4));
        body[2..].CopyTo(data.AsSpan(4 + topic.Length));
        return new HeldPublish(packetId, data);
    }
}
