using Broker.Abstractions;
using Broker.Storage.FileStore.Internal.Crypto;
using Broker.Storage.FileStore.Internal.Io;

namespace Broker.Storage.FileStore.Internal;

/// <summary>
/// <c>meta.inf</c> of a consumer folder: the consumer's configuration with the engine's metadata, written atomically
/// (sealed with the stream's key when the stream is encrypted).
/// </summary>
internal static class ConsumerMetaFile
{
    public const string FileName = "meta.inf";

    /// <summary>Writes <paramref name="config"/> atomically; its folder synced too unless <paramref name="syncDirectory"/> is false (a caller syncing it later).</summary>
    public static void Write(IStorageFileSystem fs, string directory, StreamKey? key, ConsumerStoreConfig config, bool syncDirectory = true)
    {
        var encoded = ConsumerStateCodec.EncodeConfig(config);
        AtomicFile.Write(fs, Path.Combine(directory, FileName), key is null ? encoded : key.SealFile(encoded, "consumer meta"u8), syncDirectory);
    }

    /// <summary>The configuration <c>meta.inf</c> of <paramref name="directory"/> holds, or null when missing, torn or unreadable.</summary>
    public static ConsumerStoreConfig? ReadConfig(IStorageFileSystem fs, string directory, StreamKey? key)
    {
        try
        {
            var meta = Read(fs, directory, key);
            return meta is null ? null : ConsumerStateCodec.DecodeConfig(meta);
        }
        catch (Exception ex) when (ex is IOException or UnauthorizedAccessException or InvalidDataException)
        {
            return null;
        }
    }

    /// <summary>The contents of <c>meta.inf</c> (opened when the stream is encrypted), or null when missing or torn.</summary>
    public static byte[]? Read(IStorageFileSystem fs, string directory, StreamKey? key)
    {
        var meta = AtomicFile.Read(fs, Path.Combine(directory, FileName));
        return meta is not null && key is not null ? key.OpenFile(meta, "consumer meta"u8) : meta;
    }
}
