using System.Text;

namespace Broker.Adapters.Mqtt.Internal.Codec;

/// <summary>The will of a connection (CONNECT's will topic, payload, QoS, retain flag and MQTT 5 will properties).</summary>
internal sealed class WillMessage
{
    private WillMessage(string topic, byte[] topicBytes, byte[] payload, byte qos, bool retain, byte[] properties, uint delay)
    {
        Topic = topic;
        TopicBytes = topicBytes;
        Payload = payload;
        Qos = qos;
        Retain = retain;
        Properties = properties;
        DelaySeconds = delay;
    }

    public string Topic { get; }

    public byte[] TopicBytes { get; }

    public byte[] Payload { get; }

    public byte Qos { get; }

    public bool Retain { get; }

    /// <summary>The raw MQTT 5 will property block (empty for 3.1.1), read again with <see cref="MessageProperties.Read"/>.</summary>
    public byte[] Properties { get; }

    /// <summary>MQTT 5 will delay interval in seconds.</summary>
    public uint DelaySeconds { get; }

    public static WillMessage Read(ref PacketReader reader, bool v5, byte qos, bool retain)
    {
        var block = Array.Empty<byte>();
        uint delay = 0;
        if (v5)
        {
            var properties = new PropertyReader(ref reader);
            var parsed = MessageProperties.Read(ref properties, will: true);
            delay = parsed.WillDelay;
            block = properties.Block.ToArray();
        }

        var topic = reader.ReadUtf8("Will topic");
        if (topic.IsEmpty)
        {
            throw MqttProtocolException.Protocol("empty Will topic not allowed");
        }

        if (topic.IndexOfAny("+#"u8) >= 0)
        {
            throw new MqttProtocolException(ReasonCode.TopicNameInvalid, "wildcards not allowed in Will topic");
        }

        var payload = reader.ReadBinary("Will message").ToArray();
        return new WillMessage(Encoding.UTF8.GetString(topic), topic.ToArray(), payload, qos, retain, block, delay);
    }
}
