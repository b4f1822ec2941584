using System.Buffers.Binary;

namespace Broker.Storage.FileStore.Internal.Format;

/// <summary>
/// The 32-byte header every block file starts with:
/// <code>
///  0  "JSB1"       magic
///  4  u8 version   1
///  5  u8 flags     1 = compressed (Snappy), 2 = encrypted
///  6  u16          reserved
///  8  salt[16]     random; the block key's HKDF salt when encrypted
/// 24  u32          reserved
/// 28  u32 CRC-32C  of bytes 0..27
/// </code>
/// An uncompressed block's records follow at offset 32. A compressed block is written whole (temporary file, fsync,
/// rename) as: header, u32 raw length, u32 compressed length, the Snappy bytes, u32 CRC-32C of the Snappy bytes.
/// </summary>
internal static class BlockFileHeader
{
    public const int Size = 32;
    public const byte Compressed = 1;
    public const byte Encrypted = 2;

    public static void Write(Span<byte> header, byte flags, ReadOnlySpan<byte> salt)
    {
        header[..Size].Clear();
        "JSB1"u8.CopyTo(header);
        header[4] = 1;
        header[5] = flags;
        salt[..16].CopyTo(header[8..]);
        BinaryPrimitives.WriteUInt32LittleEndian(header[28..], Crc32C.Compute(header[..28]));
    }

    public static bool TryRead(ReadOnlySpan<byte> header, out byte flags, out byte[] salt)
    {
        salt = [];
        if (!TryReadFlags(header, out flags))
        {
            return false;
        }

        salt = header.Slice(8, 16).ToArray();
        return true;
    }

    /// <summary>Checks the header and reads its flags only (a block load, which knows the salt: allocates nothing).</summary>
    public static bool TryReadFlags(ReadOnlySpan<byte> header, out byte flags)
    {
        flags = 0;
        if (header.Length < Size || !header[..4].SequenceEqual("JSB1"u8) || header[4] != 1
            || BinaryPrimitives.ReadUInt32LittleEndian(header[28..]) != Crc32C.Compute(header[..28]))
        {
            return false;
        }

        flags = header[5];
        return true;
    }
}
