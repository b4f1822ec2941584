using System.Text;

namespace Broker.Adapters.Mqtt.Internal.Codec;

/// <summary>One topic filter of a SUBSCRIBE with its options (MQTT 5 subscription options; 3.1.1 has only the QoS).</summary>
internal sealed record TopicFilterRequest(string Filter, byte Qos, bool NoLocal, bool RetainAsPublished, byte RetainHandling);

/// <summary>A decoded SUBSCRIBE or UNSUBSCRIBE (not on the hot path: allocates freely).</summary>
internal sealed class SubscribePacket
{
    private SubscribePacket(ushort packetId, int subscriptionIdentifier, List<TopicFilterRequest> filters)
    {
        PacketId = packetId;
        SubscriptionIdentifier = subscriptionIdentifier;
        Filters = filters;
    }

    public ushort PacketId { get; }

    /// <summary>The MQTT 5 subscription identifier, or 0.</summary>
    public int SubscriptionIdentifier { get; }

    public IReadOnlyList<TopicFilterRequest> Filters { get; }

    public static SubscribePacket Parse(ReadOnlySpan<byte> body, bool v5, bool unsubscribe)
    {
        var reader = new PacketReader(body);
        var packetId = reader.ReadUInt16("packet identifier");
        if (packetId == 0)
        {
            throw MqttProtocolException.Malformed("packet identifier cannot be 0");
        }

        var identifier = 0;
        if (v5)
        {
            var properties = new PropertyReader(ref reader);
            while (properties.MoveNext())
            {
                if (properties.Current == PropertyId.UserProperty)
                {
                    properties.ReadUserProperty(out _, out _);
                }
                else if (properties.Current == PropertyId.SubscriptionIdentifier && !unsubscribe)
                {
                    if (identifier != 0)
                    {
                        throw MqttProtocolException.Protocol("subscription identifier given twice");
                    }

                    identifier = properties.ReadVariableInt();
                    if (identifier == 0)
                    {
                        throw MqttProtocolException.Protocol("subscription identifier of 0");
                    }
                }
                else
                {
                    throw properties.NotAllowed(unsubscribe ? "UNSUBSCRIBE" : "SUBSCRIBE");
                }
            }
        }

        var filters = new List<TopicFilterRequest>();
        while (reader.HasMore)
        {
            var filter = reader.ReadUtf8("topic filter");
            if (filter.IsEmpty)
            {
                throw MqttProtocolException.Protocol("topic filter cannot be empty");
            }

            var text = Encoding.UTF8.GetString(filter);
            if (unsubscribe)
            {
                filters.Add(new TopicFilterRequest(text, 0, false, false, 0));
                continue;
            }

            var options = reader.ReadByte("QoS");
            var qos = (byte)(options & 0x03);
            if (qos == 3)
            {
                throw MqttProtocolException.Malformed($"subscribe QoS value must be 0, 1 or 2, got {qos}");
            }

            if ((options & (v5 ? 0xC0 : 0xFC)) != 0)
            {
                throw MqttProtocolException.Malformed($"reserved bits of the subscription options are set: 0x{options:x2}");
            }

            var retainHandling = (byte)((options >> 4) & 0x03);
            if (retainHandling == 3)
            {
                throw MqttProtocolException.Protocol("retain handling value of 3");
            }

            filters.Add(new TopicFilterRequest(text, qos, (options & 0x04) != 0, (options & 0x08) != 0, retainHandling));
        }

        if (filters.Count == 0)
        {
            throw MqttProtocolException.Protocol($"{(unsubscribe ? "un" : string.Empty)}subscribe protocol must contain at least 1 topic filter");
        }

        return new SubscribePacket(packetId, identifier, filters);
    }
}
