using System.Buffers.Binary;
using System.Text;

namespace Broker.Storage.FileStore.Internal.Format;

/// <summary>A growable little-endian writer for the store's small binary files (metadata, checkpoints, consumer state).</summary>
internal sealed class BinaryBuilder
{
    private byte[] buffer;
    private int length;

    public BinaryBuilder(int capacity = 256) => buffer = new byte[capacity];

    public int Length => length;

    public ReadOnlySpan<byte> Written => buffer.AsSpan(0, length);

    public void U8(byte value) => Reserve(1)[0] = value;

    public void U32(uint value) => BinaryPrimitives.WriteUInt32LittleEndian(Reserve(4), value);

    public void I32(int value) => BinaryPrimitives.WriteInt32LittleEndian(Reserve(4), value);

    public void U64(ulong value) => BinaryPrimitives.WriteUInt64LittleEndian(Reserve(8), value);

    public void I64(long value) => BinaryPrimitives.WriteInt64LittleEndian(Reserve(8), value);

    public void Bytes(ReadOnlySpan<byte> value)
    {
        I32(value.Length);
        value.CopyTo(Reserve(value.Length));
    }

    public void Text(string value) => Bytes(Encoding.UTF8.GetBytes(value));

    public void Raw(ReadOnlySpan<byte> value) => value.CopyTo(Reserve(value.Length));

    private Span<byte> Reserve(int size)
    {
        if (length + size > buffer.Length)
        {
            Array.Resize(ref buffer, Math.Max(buffer.Length * 2, length + size));
        }

        var span = buffer.AsSpan(length, size);
        length += size;
        return span;
    }
}

/// <summary>Reads what <see cref="BinaryBuilder"/> wrote; throws <see cref="InvalidDataException"/> past the end.</summary>
internal ref struct BinaryParser
{
    private ReadOnlySpan<byte> data;

    public BinaryParser(ReadOnlySpan<byte> data) => this.data = data;

    public readonly bool AtEnd => data.IsEmpty;

    public byte U8() => Take(1)[0];

    public uint U32() => BinaryPrimitives.ReadUInt32LittleEndian(Take(4));

    public int I32() => BinaryPrimitives.ReadInt32LittleEndian(Take(4));

    public ulong U64() => BinaryPrimitives.ReadUInt64LittleEndian(Take(8));

    public long I64() => BinaryPrimitives.ReadInt64LittleEndian(Take(8));

    public byte[] Bytes()
    {
        var size = I32();
        if (size < 0)
        {
            throw new InvalidDataException("negative length");
        }

        return Take(size).ToArray();
    }

    public string Text() => Encoding.UTF8.GetString(Bytes());

    public ReadOnlySpan<byte> Raw(int size) => Take(size);

    private ReadOnlySpan<byte> Take(int size)
    {
        if (size > data.Length)
        {
            throw new InvalidDataException("truncated");
        }

        var span = data[..size];
        data = data[size..];
        return span;
    }
}
