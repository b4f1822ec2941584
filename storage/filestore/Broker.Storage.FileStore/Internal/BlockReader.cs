using System.Buffers.Binary;
using System.Runtime.CompilerServices;
using Broker.Storage.FileStore.Internal.Crypto;
using Broker.Storage.FileStore.Internal.Format;
using Broker.Storage.FileStore.Internal.Io;

namespace Broker.Storage.FileStore.Internal;

/// <summary>Reads a block file's records (decompressing a compressed block) into a pooled buffer.</summary>
internal static class BlockReader
{
    /// <summary>
    /// The raw records of a block: for a plain block everything after the header up to the file's end (a
    /// preallocated zero tail included, which the record scan stops at); for a compressed block the decompressed
    /// records after checking the compressed bytes' checksum. <paramref name="end"/> is the length of that data.
    /// </summary>
    /// <exception cref="InvalidDataException">The header or the compressed payload is corrupt.</exception>
    public static byte[] ReadRecords(IStorageFile file, MessageBlock block, BlockBuffers buffers, out long end)
    {
        var length = file.Length;
        Span<byte> header = stackalloc byte[BlockFileHeader.Size];
        if (length < BlockFileHeader.Size || file.Read(header, 0) < BlockFileHeader.Size || !BlockFileHeader.TryReadFlags(header, out var flags))
        {
            throw new InvalidDataException($"block {block.Path} has no valid header");
        }

        if ((flags & BlockFileHeader.Compressed) == 0)
        {
            var size = (int)(length - BlockFileHeader.Size);
            var buffer = buffers.RentCache(Math.Max(size, 1));
            end = file.Read(buffer.AsSpan(0, size), BlockFileHeader.Size);
            return buffer;
        }

        return ReadCompressed(file, block, buffers, length, out end);
    }

    // Not inlined, as WriteCompressed: a caller JIT-compiled at tier 1 (ReadRecords, the maintenance tick's SealBlocks)
    // would otherwise resolve IronSnappy's methods while compiling and load IronSnappy and netstandard into a store that
    // compresses nothing (~250 KB of file pages in the first minute of an MQTT server, issue 25, lazy1).
    [MethodImpl(MethodImplOptions.NoInlining)]
    private static byte[] ReadCompressed(IStorageFile file, MessageBlock block, BlockBuffers buffers, long length, out long end)
    {
        var all = new byte[length];
        file.Read(all, 0);
        var rawLength = BinaryPrimitives.ReadInt32LittleEndian(all.AsSpan(BlockFileHeader.Size));
        var compressedLength = BinaryPrimitives.ReadInt32LittleEndian(all.AsSpan(BlockFileHeader.Size + 4));
        var start = BlockFileHeader.Size + 8;
        if (rawLength < 0 || compressedLength < 0 || start + (long)compressedLength + 4 > length)
        {
            throw new InvalidDataException($"block {block.Path}: compressed payload truncated");
        }

        var compressed = all.AsSpan(start, compressedLength);
        if (BinaryPrimitives.ReadUInt32LittleEndian(all.AsSpan(start + compressedLength)) != Crc32C.Compute(compressed))
        {
            throw new InvalidDataException($"block {block.Path}: compressed payload fails its checksum");
        }

        var raw = buffers.RentCache(Math.Max(rawLength, 1));
        var decoded = IronSnappy.Snappy.Decode(compressed);
        if (decoded.Length != rawLength)
        {
            buffers.ReturnCache(raw);
            throw new InvalidDataException($"block {block.Path}: decompressed size differs");
        }

        decoded.CopyTo(raw, 0);
        end = rawLength;
        return raw;
    }

    /// <summary>Writes a sealed block compressed, as a new file replacing the old one atomically.</summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    public static void WriteCompressed(IStorageFileSystem fs, MessageBlock block, ReadOnlySpan<byte> records)
    {
        var compressed = IronSnappy.Snappy.Encode(records);
        var output = new byte[BlockFileHeader.Size + 8 + compressed.Length + 4];
        BlockFileHeader.Write(output, (byte)(block.Flags | BlockFileHeader.Compressed), block.Salt);
        BinaryPrimitives.WriteInt32LittleEndian(output.AsSpan(BlockFileHeader.Size), records.Length);
        BinaryPrimitives.WriteInt32LittleEndian(output.AsSpan(BlockFileHeader.Size + 4), compressed.Length);
        compressed.CopyTo(output, BlockFileHeader.Size + 8);
        BinaryPrimitives.WriteUInt32LittleEndian(output.AsSpan(output.Length - 4), Crc32C.Compute(compressed));
        var temporary = block.Path + ".tmp";
        using (var file = fs.Open(temporary, create: true))
        {
            file.SetLength(0);
            file.Write(output, 0);
            file.Sync();
        }

        fs.Rename(temporary, block.Path);
        fs.SyncDirectory(Path.GetDirectoryName(block.Path)!);
    }
}
