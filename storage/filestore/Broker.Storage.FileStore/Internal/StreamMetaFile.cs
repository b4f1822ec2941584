using System.Security.Cryptography;
using Broker.Abstractions;
using Broker.Storage.FileStore.Internal.Crypto;
using Broker.Storage.FileStore.Internal.Format;
using Broker.Storage.FileStore.Internal.Io;

namespace Broker.Storage.FileStore.Internal;

/// <summary>
/// <c>meta.inf</c> of a stream directory: the store configuration, the engine's opaque metadata, and when encrypted the
/// stream's key salt and a check value of the key (so a wrong or missing key is refused with a clear message instead
/// of reading as corruption). Written atomically with a checksum; the engine metadata is encrypted with the stream key.
/// </summary>
internal static class StreamMetaFile
{
    public const string FileName = "meta.inf";
    private const uint Magic = 0x314D534A; // "JSM1"

    public static void Write(IStorageFileSystem fs, string directory, StreamStoreConfig config, byte[]? salt, StreamKey? key)
    {
        var builder = new BinaryBuilder();
        builder.U32(Magic);
        builder.Text(config.Name);
        builder.Text(config.Account);
        builder.Text(config.StorageType);
        builder.I32(config.Subjects.Count);
        foreach (var subject in config.Subjects)
        {
            builder.Text(subject);
        }

        builder.U8((byte)config.Retention);
        builder.I64(config.MaxMessages);
        builder.I64(config.MaxBytes);
        builder.I64(config.MaxAge.Ticks);
        builder.I64(config.MaxMessagesPerSubject);
        builder.U8((byte)config.Discard);
        builder.U8(config.DiscardNewPerSubject ? (byte)1 : (byte)0);
        builder.U8(key is null ? (byte)0 : (byte)key.Cipher);
        if (key is not null)
        {
            builder.Bytes(salt!);
            builder.Bytes(key.CheckValue());
            builder.Bytes(key.SealFile(config.Metadata.Span, "meta"u8));
        }
        else
        {
            builder.Bytes(config.Metadata.Span);
        }

        // Added last, so a meta.inf written before it reads as uncompressed.
        builder.U8((byte)config.Compression);

        AtomicFile.Write(fs, Path.Combine(directory, FileName), builder.Written);
    }

    /// <summary>Reads the metadata; <see langword="null"/> when the directory holds no (valid) stream of ours.</summary>
    /// <exception cref="InvalidOperationException">The stream is encrypted and the key is missing or different.</exception>
    /// <summary>
    /// Deletes a stream directory durably. <c>meta.inf</c> goes first (and its deletion is fsynced), so a crash mid-way
    /// never leaves a half-deleted stream that recovers.
    /// </summary>
    public static void DeleteStream(IStorageFileSystem fs, string directory)
    {
        var meta = Path.Combine(directory, FileName);
        if (fs.FileExists(meta))
        {
            fs.DeleteFile(meta);
            fs.SyncDirectory(directory);
        }

        fs.DeleteDirectory(directory);
        var parent = Path.GetDirectoryName(directory);
        if (!string.IsNullOrEmpty(parent) && fs.DirectoryExists(parent))
        {
            fs.SyncDirectory(parent);
        }
    }

    public static (StreamStoreConfig Config, byte[]? Salt, StreamKey? Key)? Read(IStorageFileSystem fs, string directory, FileStoreOptions options)
    {
        var data = AtomicFile.Read(fs, Path.Combine(directory, FileName));
        if (data is null)
        {
            return null;
        }

        try
        {
            var parser = new BinaryParser(data);
            if (parser.U32() != Magic)
            {
                return null;
            }

            var name = parser.Text();
            var account = parser.Text();
            var storageType = parser.Text();
            var subjects = new string[parser.I32()];
            for (var i = 0; i < subjects.Length; i++)
            {
                subjects[i] = parser.Text();
            }

            var retention = (RetentionPolicy)parser.U8();
            var maxMessages = parser.I64();
            var maxBytes = parser.I64();
            var maxAge = new TimeSpan(parser.I64());
            var maxPerSubject = parser.I64();
            var discard = (DiscardPolicy)parser.U8();
            var discardNewPerSubject = parser.U8() != 0;
            var cipher = (FileStoreCipher)parser.U8();
            byte[]? salt = null;
            StreamKey? key = null;
            byte[] metadata;
            if (cipher != FileStoreCipher.None)
            {
                salt = parser.Bytes();
                var check = parser.Bytes();
                if (string.IsNullOrEmpty(options.Key))
                {
                    throw new InvalidOperationException($"stream {name} is encrypted but no encryption key is configured");
                }

                key = StreamKey.Derive(cipher, options.Key, salt);
                if (!CryptographicOperations.FixedTimeEquals(check, key.CheckValue()))
                {
                    throw new InvalidOperationException($"stream {name} is encrypted with a different key than the one configured");
                }

                metadata = key.OpenFile(parser.Bytes(), "meta"u8) ?? throw new InvalidOperationException($"stream {name}: metadata does not authenticate");
            }
            else
            {
                metadata = parser.Bytes();
            }

            var compression = parser.AtEnd ? StreamCompression.None : (StreamCompression)parser.U8();

            var config = new StreamStoreConfig
            {
                Name = name,
                Account = account,
                StorageType = storageType,
                Directory = directory,
                Subjects = subjects,
                Retention = retention,
                MaxMessages = maxMessages,
                MaxBytes = maxBytes,
                MaxAge = maxAge,
                MaxMessagesPerSubject = maxPerSubject,
                Discard = discard,
                DiscardNewPerSubject = discardNewPerSubject,
                Metadata = metadata,
                Compression = compression,
            };
            return (config, salt, key);
        }
        catch (InvalidDataException)
        {
            return null;
        }
    }
}
