namespace Broker.Adapters.Mqtt.Internal.Codec;

/// <summary>
/// The MQTT 5 properties of an application message (PUBLISH or will), as spans into the packet: what the adapter
/// carries to NATS as headers and back. User properties stay in <see cref="Block"/> and are walked when needed.
/// </summary>
internal ref struct MessageProperties
{
    /// <summary>Payload format indicator: 0 bytes, 1 UTF-8 (MQTT-3.3.2.3.2).</summary>
    public byte PayloadFormat;

    public bool HasMessageExpiry;

    /// <summary>Message expiry interval in seconds, when <see cref="HasMessageExpiry"/>.</summary>
    public uint MessageExpiry;

    /// <summary>The topic alias, or 0.</summary>
    public ushort TopicAlias;

    public ReadOnlySpan<byte> ContentType;

    public ReadOnlySpan<byte> ResponseTopic;

    public ReadOnlySpan<byte> CorrelationData;

    public bool HasUserProperties;

    /// <summary>Will delay interval in seconds (wills only).</summary>
    public uint WillDelay;

    /// <summary>The whole property block, for walking user properties.</summary>
    public ReadOnlySpan<byte> Block;

    /// <summary>Whether any property would become a NATS header (not counting the alias and will delay).</summary>
    public readonly bool HasHeaderProperties
        => PayloadFormat != 0 || HasMessageExpiry || !ContentType.IsEmpty || !ResponseTopic.IsEmpty || !CorrelationData.IsEmpty || HasUserProperties;

    /// <summary>Reads the properties of a PUBLISH (<paramref name="will"/> false) or of a will.</summary>
    public static MessageProperties Read(scoped ref PropertyReader properties, bool will)
    {
        var result = default(MessageProperties);
        result.Block = properties.Block;
        var packet = will ? "will properties" : "PUBLISH";
        while (properties.MoveNext())
        {
            switch (properties.Current)
            {
                case PropertyId.PayloadFormatIndicator:
                    result.PayloadFormat = properties.ReadByte();
                    if (result.PayloadFormat > 1)
                    {
                        throw MqttProtocolException.Protocol($"payload format indicator must be 0 or 1, got {result.PayloadFormat}");
                    }

                    break;
                case PropertyId.MessageExpiryInterval:
                    result.HasMessageExpiry = true;
                    result.MessageExpiry = properties.ReadUInt32();
                    break;
                case PropertyId.ContentType:
                    result.ContentType = properties.ReadUtf8();
                    break;
                case PropertyId.ResponseTopic:
                    result.ResponseTopic = properties.ReadUtf8();
                    if (result.ResponseTopic.IsEmpty || result.ResponseTopic.IndexOfAny("+#"u8) >= 0)
                    {
                        throw MqttProtocolException.Protocol("response topic must be a topic name without wildcards");
                    }

                    break;
                case PropertyId.CorrelationData:
                    result.CorrelationData = properties.ReadBinary();
                    break;
                case PropertyId.UserProperty:
                    properties.ReadUserProperty(out _, out _);
                    result.HasUserProperties = true;
                    break;
                case PropertyId.TopicAlias when !will:
                    result.TopicAlias = properties.ReadUInt16();
                    if (result.TopicAlias == 0)
                    {
                        // MQTT-3.3.2-8; the receiver disconnects with 0x94 (section 3.3.4).
                        throw new MqttProtocolException(ReasonCode.TopicAliasInvalid, "topic alias 0 is not allowed");
                    }

                    break;
                case PropertyId.WillDelayInterval when will:
                    result.WillDelay = properties.ReadUInt32();
                    break;
                default:
                    // A client may not send a subscription identifier (MQTT-3.3.4-6) nor any other property here.
                    throw properties.NotAllowed(packet);
            }
        }

        return result;
    }
}
