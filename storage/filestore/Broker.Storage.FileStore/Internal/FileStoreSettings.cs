using System.Globalization;
using Microsoft.Extensions.Configuration;

namespace Broker.Storage.FileStore.Internal;

/// <summary>
/// Reads <see cref="FileStoreOptions"/> from configuration with nats-server's key names (<c>sync_interval</c>,
/// <c>cipher</c>, <c>key</c>, <c>compression</c>) plus the store's own (<c>block_size</c>, <c>checkpoint_interval</c>,
/// <c>cache_expiry</c>), refusing unknown keys and bad values with a message naming the key.
/// </summary>
internal static class FileStoreSettings
{
    private static readonly HashSet<string> Keys = new(StringComparer.OrdinalIgnoreCase)
    {
        "sync_interval", "sync", "block_size", "compression", "cipher", "key", "encryption_key", "checkpoint_interval", "cache_expiry",
    };

    public static FileStoreOptions Read(IConfiguration section, string path)
    {
        foreach (var child in section.GetChildren())
        {
            if (!Keys.Contains(child.Key))
            {
                throw new InvalidOperationException($"{path}: unknown field \"{child.Key}\"");
            }
        }

        var options = new FileStoreOptions();
        if ((section["sync_interval"] ?? section["sync"]) is { } sync)
        {
            options.SyncInterval = sync.Trim().ToLowerInvariant() switch
            {
                "always" or "" => null,
                _ => ParseDuration(sync) ?? throw new InvalidOperationException($"{path}: sync_interval \"{sync}\" is not \"always\" or a duration such as 2m"),
            };
        }

        if (section["block_size"] is { } blockSize)
        {
            options.BlockSize = ParseSize(blockSize) ?? throw new InvalidOperationException($"{path}: block_size \"{blockSize}\" is not a size such as 8MB");
        }

        if (section["compression"] is { } compression)
        {
            options.Compression = compression.Trim().ToLowerInvariant() switch
            {
                "none" or "" or "false" or "off" => FileStoreCompression.None,
                "s2" or "snappy" or "true" or "on" => FileStoreCompression.Snappy,
                _ => throw new InvalidOperationException($"{path}: compression \"{compression}\" is not none or snappy (s2)"),
            };
        }

        if (section["cipher"] is { } cipher)
        {
            options.Cipher = cipher.Trim().ToLowerInvariant() switch
            {
                "none" or "" => FileStoreCipher.None,
                "aes" or "aes-gcm" or "aesgcm" => FileStoreCipher.AesGcm,
                "chacha" or "chachapoly" or "chacha20-poly1305" => FileStoreCipher.ChaCha20Poly1305,
                _ => throw new InvalidOperationException($"{path}: cipher \"{cipher}\" is not aes or chachapoly"),
            };
        }

        options.Key = section["key"] ?? section["encryption_key"];
        if (!string.IsNullOrEmpty(options.Key) && options.Cipher == FileStoreCipher.None)
        {
            // nats-server: a key without a cipher means ChaCha20-Poly1305.
            options.Cipher = FileStoreCipher.ChaCha20Poly1305;
        }

        if (section["checkpoint_interval"] is { } checkpoint)
        {
            options.CheckpointInterval = ParseDuration(checkpoint) ?? throw new InvalidOperationException($"{path}: checkpoint_interval \"{checkpoint}\" is not a duration");
        }

        if (section["cache_expiry"] is { } expiry)
        {
            options.CacheExpiry = ParseDuration(expiry) ?? throw new InvalidOperationException($"{path}: cache_expiry \"{expiry}\" is not a duration");
        }

        try
        {
            options.Validate();
        }
        catch (InvalidOperationException ex)
        {
            throw new InvalidOperationException($"{path}: {ex.Message}", ex);
        }

        return options;
    }

    /// <summary>A Go-style duration (500ms, 2s, 1m, 1h) or a bare number of seconds.</summary>
    public static TimeSpan? ParseDuration(string text)
    {
        text = text.Trim();
        if (double.TryParse(text, NumberStyles.Float, CultureInfo.InvariantCulture, out var seconds))
        {
            return TimeSpan.FromSeconds(seconds);
        }

        (string Suffix, double Milliseconds)[] units = [("ms", 1), ("us", 0.001), ("ns", 0.000001), ("s", 1000), ("m", 60_000), ("h", 3_600_000)];
        foreach (var (suffix, scale) in units)
        {
            if (text.EndsWith(suffix, StringComparison.OrdinalIgnoreCase)
                && double.TryParse(text[..^suffix.Length], NumberStyles.Float, CultureInfo.InvariantCulture, out var value))
            {
                return TimeSpan.FromMilliseconds(value * scale);
            }
        }

        return null;
    }

    /// <summary>A size in bytes with an optional K/KB/M/MB/G/GB suffix (powers of 1024, as nats-server).</summary>
    public static long? ParseSize(string text)
    {
        text = text.Trim().ToUpperInvariant();
        long scale = 1;
        foreach (var (suffix, factor) in new (string, long)[] { ("KB", 1L << 10), ("K", 1L << 10), ("MB", 1L << 20), ("M", 1L << 20), ("GB", 1L << 30), ("G", 1L << 30), ("B", 1) })
        {
            if (text.EndsWith(suffix, StringComparison.Ordinal))
            {
                text = text[..^suffix.Length].Trim();
                scale = factor;
                break;
            }
        }

        return long.TryParse(text, NumberStyles.None, CultureInfo.InvariantCulture, out var value) ? value * scale : null;
    }
}
