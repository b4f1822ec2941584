using Broker.Abstractions;
using Microsoft.Extensions.Configuration;

namespace Broker.Storage.FileStore.Internal;

/// <summary>
/// Reads <see cref="FileStoreOptions"/> through the contract's shared reader (<see cref="ConfigurationValues"/>), with
/// nats-server's key names for what nats-server has (<c>sync_interval</c>, <c>cipher</c>, <c>key</c>; the host maps them
/// from the <c>jetstream { }</c> block) and the store's own for the rest (<c>compression</c>, <c>block_size</c>,
/// <c>checkpoint_interval</c>, <c>cache_expiry</c>), refusing unknown keys and bad values.
/// </summary>
internal static class FileStoreOptionsReader
{
    public static FileStoreOptions Read(IConfiguration section)
    {
        section.RejectUnknownKeys("sync_interval", "block_size", "compression", "cipher", "key", "checkpoint_interval", "cache_expiry");
        var options = new FileStoreOptions();
        if (section["sync_interval"] is { } sync && !string.Equals(sync.Trim(), "always", StringComparison.OrdinalIgnoreCase))
        {
            options.SyncInterval = section.GetDuration("sync_interval");
        }

        if (section.GetSize("block_size") is { } blockSize)
        {
            options.BlockSize = blockSize;
        }

        if (section["compression"] is { } compression)
        {
            options.Compression = compression.Trim().ToLowerInvariant() switch
            {
                "none" or "" or "false" or "off" => FileStoreCompression.None,
                "s2" or "snappy" or "true" or "on" => FileStoreCompression.Snappy,
                _ => throw section.Refuse("compression", $"\"{compression}\" is not none or snappy (s2)"),
            };
        }

        if (section["cipher"] is { } cipher)
        {
            options.Cipher = cipher.Trim().ToLowerInvariant() switch
            {
                "none" or "" => FileStoreCipher.None,
                "aes" or "aes-gcm" or "aesgcm" => FileStoreCipher.AesGcm,
                "chacha" or "chachapoly" or "chacha20-poly1305" => FileStoreCipher.ChaCha20Poly1305,
                _ => throw section.Refuse("cipher", $"\"{cipher}\" is not aes or chachapoly"),
            };
        }

        options.Key = section["key"];
        if (!string.IsNullOrEmpty(options.Key) && options.Cipher == FileStoreCipher.None)
        {
            // nats-server: a key without a cipher means ChaCha20-Poly1305.
            options.Cipher = FileStoreCipher.ChaCha20Poly1305;
        }

        options.CheckpointInterval = section.GetDuration("checkpoint_interval", options.CheckpointInterval);
        options.CacheExpiry = section.GetDuration("cache_expiry", options.CacheExpiry);
        try
        {
            options.Validate();
        }
        catch (InvalidOperationException ex)
        {
            throw section.Refuse(null, ex.Message);
        }

        return options;
    }
}
