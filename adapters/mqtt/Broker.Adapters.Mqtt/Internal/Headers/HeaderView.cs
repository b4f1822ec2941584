using System.Buffers.Text;
using Broker.Abstractions;

namespace Broker.Adapters.Mqtt.Internal.Headers;

/// <summary>
/// The MQTT metadata found in a NATS header block (<c>NATS/1.0 ...\r\n</c> then <c>Name: value</c> lines), read
/// without copying: what a delivery to an MQTT client needs. Other headers become MQTT 5 user properties, walked
/// with <see cref="NextUserProperty"/>.
/// </summary>
internal ref struct HeaderView
{
    private NatsHeaderReader reader;

    public HeaderView(ReadOnlySpan<byte> block)
    {
        reader = new NatsHeaderReader(block);
        Qos = 0;
        Retained = false;
        FromMqtt = false;
        PayloadFormat = 0;
        HasMessageExpiry = false;
        MessageExpiry = 0;
        ContentType = default;
        ResponseTopic = default;
        CorrelationData = default;
        Origin = default;
        UserPropertyCount = 0;
        while (reader.TryRead(out var name, out var value))
        {
            if (name.SequenceEqual(MqttHeaders.Pub))
            {
                FromMqtt = true;
                if (!value.IsEmpty && value[0] is >= (byte)'0' and <= (byte)'2')
                {
                    Qos = (byte)(value[0] - '0');
                }

                Retained = value.Length > 1 && HexNibble(value[1]) is { } flags && (flags & 0x01) != 0;
            }
            else if (name.SequenceEqual(MqttHeaders.ContentType))
            {
                ContentType = value;
            }
            else if (name.SequenceEqual(MqttHeaders.PayloadFormat))
            {
                PayloadFormat = value.SequenceEqual("1"u8) ? (byte)1 : (byte)0;
            }
            else if (name.SequenceEqual(MqttHeaders.MessageExpiry))
            {
                HasMessageExpiry = Utf8Parser.TryParse(value, out uint seconds, out _);
                MessageExpiry = seconds;
            }
            else if (name.SequenceEqual(MqttHeaders.ResponseTopic))
            {
                ResponseTopic = value;
            }
            else if (name.SequenceEqual(MqttHeaders.CorrelationData))
            {
                CorrelationData = value;
            }
            else if (name.SequenceEqual(MqttHeaders.Origin))
            {
                Origin = value;
            }
            else if (!name.StartsWith(MqttHeaders.Prefix) && MqttHeaders.IsValidName(name) && !MqttHeaders.IsHeldMessageId(name, value))
            {
                UserPropertyCount++;
            }
        }

        reader.Reset();
    }

    /// <summary>The client id of the MQTT 5 publisher of a stored QoS 1 or 2 message (for no local), or empty.</summary>
    public ReadOnlySpan<byte> Origin { get; }

    /// <summary>The QoS of the original MQTT publish (0 for messages from NATS clients).</summary>
    public byte Qos { get; }

    /// <summary>Whether the original MQTT publish had its RETAIN flag set.</summary>
    public bool Retained { get; }

    /// <summary>Whether an MQTT client published the message (the <c>Nmqtt-Pub</c> header is present).</summary>
    public bool FromMqtt { get; }

    public byte PayloadFormat { get; }

    public bool HasMessageExpiry { get; }

    public uint MessageExpiry { get; }

    public ReadOnlySpan<byte> ContentType { get; }

    /// <summary>The MQTT response topic of the publisher, as it sent it.</summary>
    public ReadOnlySpan<byte> ResponseTopic { get; }

    /// <summary>The correlation data, base64 encoded.</summary>
    public ReadOnlySpan<byte> CorrelationData { get; }

    public int UserPropertyCount { get; }

    /// <summary>The next header that is not MQTT metadata, as a user property.</summary>
    public bool NextUserProperty(out ReadOnlySpan<byte> name, out ReadOnlySpan<byte> value)
    {
        while (reader.TryRead(out name, out value))
        {
            if (!name.StartsWith(MqttHeaders.Prefix) && MqttHeaders.IsValidName(name)
                && !name.SequenceEqual(MqttHeaders.ContentType) && !MqttHeaders.IsHeldMessageId(name, value))
            {
                return true;
            }
        }

        return false;
    }

    /// <summary>Rewinds <see cref="NextUserProperty"/> to the first header.</summary>
    public void Rewind() => reader.Reset();

    private static int? HexNibble(byte c) => c switch
    {
        >= (byte)'0' and <= (byte)'9' => c - '0',
        >= (byte)'a' and <= (byte)'f' => c - 'a' + 10,
        >= (byte)'A' and <= (byte)'F' => c - 'A' + 10,
        _ => null,
    };
}
