using System.Buffers.Binary;
using Broker.Storage.FileStore.Internal.Format;

namespace Broker.Storage.FileStore.Internal.Io;

/// <summary>
/// Small files replaced whole (stream metadata, checkpoints, consumer state): written to a temporary file, fsynced,
/// renamed over the old one, and the directory fsynced, so a crash leaves either the old or the new file, never a mix.
/// Each file ends with a CRC-32C of its contents, checked on reading.
/// </summary>
internal static class AtomicFile
{
    /// <summary>Replaces the file; <paramref name="syncDirectory"/> false leaves the rename to a later sync of its folder (default true).</summary>
    public static void Write(IStorageFileSystem fs, string path, ReadOnlySpan<byte> contents, bool syncDirectory = true)
    {
        var temporary = path + ".tmp";
        using (var file = fs.Open(temporary, create: true))
        {
            file.SetLength(0);
            var buffer = new byte[contents.Length + 4];
            contents.CopyTo(buffer);
            BinaryPrimitives.WriteUInt32LittleEndian(buffer.AsSpan(contents.Length), Crc32C.Compute(contents));
            file.Write(buffer, 0);
            file.Sync();
        }

        fs.Rename(temporary, path);
        if (syncDirectory)
        {
            fs.SyncDirectory(Path.GetDirectoryName(path)!);
        }
    }

    /// <summary>The contents, or <see langword="null"/> when missing or failing its checksum.</summary>
    public static byte[]? Read(IStorageFileSystem fs, string path)
    {
        var data = fs.ReadAll(path);
        if (data is null || data.Length < 4)
        {
            return null;
        }

        var contents = data.AsSpan(0, data.Length - 4);
        return BinaryPrimitives.ReadUInt32LittleEndian(data.AsSpan(data.Length - 4)) == Crc32C.Compute(contents) ? contents.ToArray() : null;
    }
}
