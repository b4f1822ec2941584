namespace Broker.Storage.FileStore;

/// <summary>Block compression of the file store.</summary>
public enum FileStoreCompression
{
    /// <summary>Blocks are stored as written (the default).</summary>
    None,

    /// <summary>A block is compressed with Snappy (IronSnappy) when it is sealed; the block being written stays plain.</summary>
    Snappy,
}

/// <summary>Encryption at rest of the file store.</summary>
public enum FileStoreCipher
{
    /// <summary>No encryption (the default).</summary>
    None,

    /// <summary>AES-256-GCM per record (<c>cipher: aes</c>); fastest where the CPU has AES instructions.</summary>
    AesGcm,

    /// <summary>ChaCha20-Poly1305 per record (<c>cipher: chachapoly</c>, nats-server's default cipher).</summary>
    ChaCha20Poly1305,
}

/// <summary>
/// Settings of the file store, read from the plugin's section <c>Plugins:FileStore</c> (see <c>docs/durability.md</c>);
/// the JetStream engine's <c>jetstream { }</c> keys <c>sync_interval</c>, <c>cipher</c>, <c>key</c> and
/// <c>compression</c> map onto the same names.
/// </summary>
public sealed class FileStoreOptions
{
    /// <summary>
    /// <see langword="null"/> (the default, also <c>sync_interval: always</c>): a message is durable, and its publish
    /// acknowledged, only after its record is fsynced; every publish that arrived while a sync was running shares the
    /// next one (group commit). A duration (<c>sync_interval: 2m</c>, nats-server's default) opts out: records are
    /// written to the operating system at once and count as durable then, and fsync runs on that interval, so a power
    /// cut can lose up to that long of acknowledged messages (a process crash loses nothing written).
    /// </summary>
    public TimeSpan? SyncInterval { get; set; }

    /// <summary>
    /// Bytes per message block; 0 (the default) chooses as nats-server does: 8 MiB for limits streams, 4 MiB for
    /// interest and work-queue streams, smaller for streams with a small <c>max_bytes</c>, at most 2 MiB when encrypted.
    /// </summary>
    public long BlockSize { get; set; }

    /// <summary>Block compression. Default <see cref="FileStoreCompression.None"/>.</summary>
    public FileStoreCompression Compression { get; set; }

    /// <summary>Encryption at rest; needs <see cref="Key"/>. Default <see cref="FileStoreCipher.None"/>.</summary>
    public FileStoreCipher Cipher { get; set; }

    /// <summary>
    /// The secret every stream's key is derived from (HKDF-SHA256 with a random salt per stream and per block). Any
    /// string; use at least 32 random characters. Losing it loses the data. Default <see langword="null"/>.
    /// </summary>
    public string? Key { get; set; }

    /// <summary>
    /// How often, at most, the stream state (block summaries, per-subject index, deletes) is checkpointed to
    /// <c>msgs/index.db</c> while data changes; a restart replays only what was appended after the last checkpoint.
    /// A checkpoint is also taken when a block is sealed (at most once a second) and at shutdown. Default 10 seconds.
    /// </summary>
    public TimeSpan CheckpointInterval { get; set; } = TimeSpan.FromSeconds(10);

    /// <summary>How long a sealed block's contents stay cached in memory after their last read. Default 10 seconds.</summary>
    public TimeSpan CacheExpiry { get; set; } = TimeSpan.FromSeconds(10);

    /// <summary>Validates the combination; throws with a message naming the setting.</summary>
    /// <exception cref="InvalidOperationException">A value is out of range or the cipher has no key.</exception>
    public void Validate()
    {
        if (SyncInterval is { } interval && interval <= TimeSpan.Zero)
        {
            throw new InvalidOperationException("sync_interval must be positive, or \"always\"");
        }

        if (BlockSize < 0 || (BlockSize > 0 && BlockSize < 4096) || BlockSize > 1L << 30)
        {
            throw new InvalidOperationException("block_size must be between 4 KiB and 1 GiB (0 chooses automatically)");
        }

        if (Cipher != FileStoreCipher.None && string.IsNullOrEmpty(Key))
        {
            throw new InvalidOperationException("cipher is set but no key is given");
        }

        if (CheckpointInterval <= TimeSpan.Zero || CacheExpiry <= TimeSpan.Zero)
        {
            throw new InvalidOperationException("checkpoint_interval and cache_expiry must be positive");
        }
    }
}
