using System.Buffers;
using System.Buffers.Text;
using Broker.Adapters.Mqtt.Internal.Codec;

namespace Broker.Adapters.Mqtt.Internal.Headers;

/// <summary>
/// The NATS headers that carry MQTT metadata. <c>Nmqtt-Pub</c> is nats-server's: it marks a message published by an
/// MQTT client and holds its QoS, followed by the PUBLISH flags nibble in hex when the message was retained
/// (nats-server's own encoding for staged QoS 2 messages). The MQTT 5 properties are ours (nats-server has no MQTT 5):
/// content type as <c>Content-Type</c>, user properties as headers of their own name, the rest as <c>Nmqtt-*</c>.
/// </summary>
internal static class MqttHeaders
{
    public static ReadOnlySpan<byte> Pub => "Nmqtt-Pub"u8;

    public static ReadOnlySpan<byte> ContentType => "Content-Type"u8;

    public static ReadOnlySpan<byte> PayloadFormat => "Nmqtt-Format"u8;

    public static ReadOnlySpan<byte> MessageExpiry => "Nmqtt-Expiry"u8;

    public static ReadOnlySpan<byte> ResponseTopic => "Nmqtt-Response-Topic"u8;

    public static ReadOnlySpan<byte> CorrelationData => "Nmqtt-Correlation"u8;

    public static ReadOnlySpan<byte> Prefix => "Nmqtt-"u8;

    /// <summary>
    /// Ours: the client id of an MQTT 5 publisher, on the copy of a QoS 1 or 2 message stored in <c>$MQTT_msgs</c> only,
    /// so a no-local subscription of the same client skips it.
    /// </summary>
    public static ReadOnlySpan<byte> Origin => "Nmqtt-Origin"u8;

    /// <summary>
    /// JetStream's message id, on the copy of a held QoS 2 publish stored in <c>$MQTT_msgs</c> at its PUBREL
    /// (<see cref="Sessions.HeldPublish.MessageId"/>); not shown to MQTT 5 subscribers as a user property.
    /// </summary>
    public static ReadOnlySpan<byte> MessageId => "Nats-Msg-Id"u8;

    /// <summary>Whether a header is the adapter's <see cref="MessageId"/>, not a user's.</summary>
    public static bool IsHeldMessageId(ReadOnlySpan<byte> name, ReadOnlySpan<byte> value)
        => name.SequenceEqual(MessageId) && value.StartsWith("$MQTT.qos2in."u8);

    /// <summary>A header block with <c>Nmqtt-Origin: clientId</c> added before its end.</summary>
    public static byte[] WithOrigin(ReadOnlySpan<byte> block, string clientId) => With(block, Origin, System.Text.Encoding.UTF8.GetBytes(clientId));

    /// <summary>A header block with <c>name: value</c> added before its end.</summary>
    public static byte[] With(ReadOnlySpan<byte> block, ReadOnlySpan<byte> name, ReadOnlySpan<byte> value)
    {
        // A block always ends with an empty line; the new header goes before it.
        var body = block.Length >= 2 ? block[..^2] : "NATS/1.0\r\n"u8;
        var result = new byte[body.Length + name.Length + 2 + value.Length + 4];
        var span = result.AsSpan();
        body.CopyTo(span);
        span = span[body.Length..];
        name.CopyTo(span);
        ": "u8.CopyTo(span[name.Length..]);
        value.CopyTo(span[(name.Length + 2)..]);
        "\r\n\r\n"u8.CopyTo(span[(name.Length + 2 + value.Length)..]);
        return result;
    }

    // "NATS/1.0\r\nNmqtt-Pub:<qos>[1]\r\n\r\n" for each QoS, without and with the retain flag.
    private static readonly byte[][] PubOnly = CreatePubOnly();

    /// <summary>The header block of a message with no MQTT 5 properties: shared, never rebuilt.</summary>
    public static ReadOnlySequence<byte> PubOnlyBlock(byte qos, bool retain) => new(PubOnly[(qos * 2) + (retain ? 1 : 0)]);

    /// <summary>Writes the header block of a message with MQTT 5 properties (and, for a relayed reply, correlation data).</summary>
    public static void Write(ArrayBufferWriter<byte> buffer, byte qos, bool retain, scoped in MessageProperties properties, ReadOnlySpan<byte> responseTopic, ReadOnlySpan<byte> correlationData)
    {
        Append(buffer, "NATS/1.0\r\n"u8);
        AppendPubLine(buffer, qos, retain);
        if (!properties.ContentType.IsEmpty && IsValidValue(properties.ContentType))
        {
            AppendHeader(buffer, ContentType, properties.ContentType);
        }

        if (properties.PayloadFormat != 0)
        {
            AppendHeader(buffer, PayloadFormat, "1"u8);
        }

        if (properties.HasMessageExpiry)
        {
            Span<byte> digits = stackalloc byte[10];
            Utf8Formatter.TryFormat(properties.MessageExpiry, digits, out var length);
            AppendHeader(buffer, MessageExpiry, digits[..length]);
        }

        if (!responseTopic.IsEmpty && IsValidValue(responseTopic))
        {
            AppendHeader(buffer, ResponseTopic, responseTopic);
        }

        if (!correlationData.IsEmpty)
        {
            var encoded = buffer.GetSpan(CorrelationData.Length + 4 + Base64.GetMaxEncodedToUtf8Length(correlationData.Length));
            CorrelationData.CopyTo(encoded);
            var position = CorrelationData.Length;
            encoded[position++] = (byte)':';
            encoded[position++] = (byte)' ';
            Base64.EncodeToUtf8(correlationData, encoded[position..], out _, out var written);
            position += written;
            encoded[position++] = (byte)'\r';
            encoded[position++] = (byte)'\n';
            buffer.Advance(position);
        }

        if (properties.HasUserProperties)
        {
            var reader = new PropertyReader(properties.Block);
            while (reader.MoveNext())
            {
                if (reader.Current == PropertyId.UserProperty)
                {
                    reader.ReadUserProperty(out var name, out var value);
                    // The prefix in any case: clients that canonicalise header names (nats.go) would read nmqtt-pub as ours.
                    if (IsValidName(name) && IsValidValue(value) && !System.Text.Ascii.EqualsIgnoreCase(name[..Math.Min(name.Length, Prefix.Length)], Prefix))
                    {
                        AppendHeader(buffer, name, value);
                    }
                }
                else
                {
                    Skip(ref reader);
                }
            }
        }

        Append(buffer, "\r\n"u8);
    }

    /// <summary>
    /// Whether a user property name can be a NATS header name (printable ASCII without <c>:</c>); others are not
    /// carried to NATS, which docs/mqtt.md states.
    /// </summary>
    public static bool IsValidName(ReadOnlySpan<byte> name)
    {
        if (name.IsEmpty)
        {
            return false;
        }

        foreach (var b in name)
        {
            if (b <= 0x20 || b >= 0x7F || b == (byte)':')
            {
                return false;
            }
        }

        return true;
    }

    /// <summary>Whether a value can be a NATS header value (no line break).</summary>
    public static bool IsValidValue(ReadOnlySpan<byte> value) => value.IndexOfAny((byte)'\r', (byte)'\n') < 0;

    private static void Skip(ref PropertyReader reader)
    {
        switch (reader.Current)
        {
            case PropertyId.PayloadFormatIndicator:
                reader.ReadByte();
                break;
            case PropertyId.MessageExpiryInterval or PropertyId.WillDelayInterval:
                reader.ReadUInt32();
                break;
            case PropertyId.TopicAlias:
                reader.ReadUInt16();
                break;
            case PropertyId.CorrelationData:
                reader.ReadBinary();
                break;
            default:
                reader.ReadUtf8();
                break;
        }
    }

    private static void AppendPubLine(ArrayBufferWriter<byte> buffer, byte qos, bool retain)
    {
        Append(buffer, Pub);
        Span<byte> value = [(byte)':', (byte)('0' + qos), (byte)'1', (byte)'\r', (byte)'\n'];
        Append(buffer, retain ? value : [.. value[..2], .. value[3..]]);
    }

    private static void AppendHeader(ArrayBufferWriter<byte> buffer, ReadOnlySpan<byte> name, ReadOnlySpan<byte> value)
    {
        var span = buffer.GetSpan(name.Length + value.Length + 4);
        name.CopyTo(span);
        var position = name.Length;
        span[position++] = (byte)':';
        span[position++] = (byte)' ';
        value.CopyTo(span[position..]);
        position += value.Length;
        span[position++] = (byte)'\r';
        span[position++] = (byte)'\n';
        buffer.Advance(position);
    }

    private static void Append(ArrayBufferWriter<byte> buffer, ReadOnlySpan<byte> bytes) => buffer.Write(bytes);

    private static byte[][] CreatePubOnly()
    {
        var blocks = new byte[6][];
        for (var qos = 0; qos < 3; qos++)
        {
            blocks[qos * 2] = System.Text.Encoding.ASCII.GetBytes($"NATS/1.0\r\nNmqtt-Pub:{qos}\r\n\r\n");
            blocks[(qos * 2) + 1] = System.Text.Encoding.ASCII.GetBytes($"NATS/1.0\r\nNmqtt-Pub:{qos}1\r\n\r\n");
        }

        return blocks;
    }
}
