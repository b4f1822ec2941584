using System.Buffers.Binary;
using System.Text;

namespace Broker.Adapters.Mqtt.Internal.Codec;

/// <summary>
/// Reads the variable header and payload of one packet from its contiguous body. Every read checks the bounds and
/// throws <see cref="MqttProtocolException"/> (malformed packet) naming the field, as nats-server's reader does.
/// </summary>
internal ref struct PacketReader
{
    private readonly ReadOnlySpan<byte> body;
    private int position;

    public PacketReader(ReadOnlySpan<byte> body)
    {
        this.body = body;
        position = 0;
    }

    public readonly int Position => position;

    public readonly int Remaining => body.Length - position;

    public readonly bool HasMore => position < body.Length;

    public byte ReadByte(string field)
    {
        if (position >= body.Length)
        {
            throw Truncated(field);
        }

        return body[position++];
    }

    public ushort ReadUInt16(string field)
    {
        if (body.Length - position < 2)
        {
            throw Truncated(field);
        }

        var value = BinaryPrimitives.ReadUInt16BigEndian(body[position..]);
        position += 2;
        return value;
    }

    public uint ReadUInt32(string field)
    {
        if (body.Length - position < 4)
        {
            throw Truncated(field);
        }

        var value = BinaryPrimitives.ReadUInt32BigEndian(body[position..]);
        position += 4;
        return value;
    }

    /// <summary>
    /// A variable byte integer (at most four bytes), MQTT 5 only (property lengths, identifiers and values), so in the
    /// fewest bytes (MQTT-1.5.5-1): a last byte of 0 after others is malformed, as Mosquitto reads it.
    /// </summary>
    public int ReadVariableInt(string field)
    {
        var value = 0;
        for (var shift = 0; shift < 28; shift += 7)
        {
            var b = ReadByte(field);
            value |= (b & 0x7F) << shift;
            if ((b & 0x80) == 0)
            {
                if (b == 0 && shift > 0)
                {
                    throw MqttProtocolException.Malformed($"variable byte integer in {field} not in the fewest bytes");
                }

                return value;
            }
        }

        throw MqttProtocolException.Malformed($"malformed variable int in {field}");
    }

    /// <summary>Two-byte length-prefixed binary data.</summary>
    public ReadOnlySpan<byte> ReadBinary(string field)
    {
        var length = ReadUInt16(field);
        return ReadBytes(length, field);
    }

    /// <summary>A two-byte length-prefixed UTF-8 string, checked as the specification requires (valid UTF-8, no U+0000).</summary>
    public ReadOnlySpan<byte> ReadUtf8(string field)
    {
        var value = ReadBinary(field);
        Utf8Check.Validate(value, field);
        return value;
    }

    public ReadOnlySpan<byte> ReadBytes(int count, string field)
    {
        if (count < 0 || body.Length - position < count)
        {
            throw Truncated(field);
        }

        var value = body.Slice(position, count);
        position += count;
        return value;
    }

    public ReadOnlySpan<byte> ReadToEnd()
    {
        var value = body[position..];
        position = body.Length;
        return value;
    }

    private static MqttProtocolException Truncated(string field) => MqttProtocolException.Malformed($"error reading {field}: unexpected EOF");
}

/// <summary>The specification's checks of UTF-8 strings (MQTT-1.5.3-1, MQTT-1.5.3-2).</summary>
internal static class Utf8Check
{
    public static void Validate(ReadOnlySpan<byte> value, string field)
    {
        if (!System.Text.Unicode.Utf8.IsValid(value))
        {
            throw MqttProtocolException.Malformed($"invalid utf8 for {field}");
        }

        if (value.IndexOf((byte)0) >= 0)
        {
            throw MqttProtocolException.Malformed($"invalid null character in {field}");
        }
    }
}
