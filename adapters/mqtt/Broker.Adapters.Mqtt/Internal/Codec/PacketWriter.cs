using System.Buffers.Binary;

namespace Broker.Adapters.Mqtt.Internal.Codec;

/// <summary>
/// Writes packet fields into a span the caller sized with the matching <c>Size</c> methods: no intermediate buffer,
/// so a delivery is formatted straight into the connection's output.
/// </summary>
internal ref struct PacketWriter
{
    private readonly Span<byte> span;
    private int position;

    public PacketWriter(Span<byte> span)
    {
        this.span = span;
        position = 0;
    }

    public readonly int Written => position;

    /// <summary>Bytes a variable byte integer takes.</summary>
    public static int VariableIntSize(int value) => value < 0x80 ? 1 : value < 0x4000 ? 2 : value < 0x200000 ? 3 : 4;

    /// <summary>Bytes of a whole packet whose remaining length is <paramref name="remainingLength"/>.</summary>
    public static int PacketSize(int remainingLength) => 1 + VariableIntSize(remainingLength) + remainingLength;

    public void WriteByte(byte value) => span[position++] = value;

    public void WriteUInt16(ushort value)
    {
        BinaryPrimitives.WriteUInt16BigEndian(span[position..], value);
        position += 2;
    }

    public void WriteUInt32(uint value)
    {
        BinaryPrimitives.WriteUInt32BigEndian(span[position..], value);
        position += 4;
    }

    public void WriteVariableInt(int value)
    {
        do
        {
            var b = (byte)(value & 0x7F);
            value >>= 7;
            if (value > 0)
            {
                b |= 0x80;
            }

            span[position++] = b;
        }
        while (value > 0);
    }

    /// <summary>Two-byte length, then the bytes.</summary>
    public void WriteBinary(scoped ReadOnlySpan<byte> value)
    {
        WriteUInt16((ushort)value.Length);
        WriteBytes(value);
    }

    public void WriteBytes(scoped ReadOnlySpan<byte> value)
    {
        value.CopyTo(span[position..]);
        position += value.Length;
    }

    /// <summary>The fixed header: type and flags, then the remaining length.</summary>
    public void WriteFixedHeader(PacketType type, byte flags, int remainingLength)
    {
        WriteByte((byte)(((int)type << 4) | flags));
        WriteVariableInt(remainingLength);
    }

    public readonly Span<byte> Rest => span[position..];

    public void Advance(int count) => position += count;
}
