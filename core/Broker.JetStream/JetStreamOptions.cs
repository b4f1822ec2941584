namespace Broker.JetStream;

/// <summary>
/// JetStream's settings: nats-server's <c>jetstream { store_dir, max_memory_store, max_file_store, domain }</c> block
/// and the <c>-js</c>/<c>-sd</c> flags. Every default matches nats-server's.
/// </summary>
public sealed class JetStreamOptions
{
    /// <summary>
    /// Where durable stores keep data: streams live under <c>&lt;StoreDirectory&gt;/jetstream/&lt;account&gt;/streams</c>
    /// (nats-server's layout). Default <see langword="null"/>: a <c>nats</c> folder under the system temporary folder, as
    /// nats-server uses when <c>store_dir</c> is not set.
    /// </summary>
    public string? StoreDirectory { get; set; }

    /// <summary>
    /// Bytes all streams on <see cref="Broker.Abstractions.StorageMedium.Memory"/> stores may hold together
    /// (<c>max_memory_store</c>); 0 or negative means the default: three quarters of the memory available to the process.
    /// </summary>
    public long MaxMemoryStore { get; set; }

    /// <summary>
    /// Bytes all streams on <see cref="Broker.Abstractions.StorageMedium.Disk"/> stores may hold together
    /// (<c>max_file_store</c>); 0 or negative means the default: 1 TB, as nats-server without a disk size to go by.
    /// </summary>
    public long MaxFileStore { get; set; }

    /// <summary>The JetStream domain reported in <c>$JS.API.INFO</c> and pub acks. Default <see langword="null"/>: none.</summary>
    public string? Domain { get; set; }

    /// <summary>The maximum pending acknowledgements of any consumer (<c>max_ack_pending</c> limit); 0 means none. Default 0.</summary>
    public int MaxAckPending { get; set; }

    /// <summary>
    /// Settings of nats-server's <c>jetstream</c> block this broker does not have yet (<c>cipher</c>, <c>sync_interval</c>,
    /// ...): logged as ignored when JetStream starts. Default empty.
    /// </summary>
    public IReadOnlyList<string> IgnoredSettings { get; set; } = [];

    // Read once, as nats-server sizes it once at start: the publish path checks the limit for every message, and
    // GC.GetGCMemoryInfo allocates.
    private static readonly long DefaultMaxMemoryStore = Math.Max(1, GC.GetGCMemoryInfo().TotalAvailableMemoryBytes / 4 * 3);

    /// <summary>The store directory in force: <see cref="StoreDirectory"/> or nats-server's default.</summary>
    public string EffectiveStoreDirectory => string.IsNullOrEmpty(StoreDirectory) ? Path.Combine(Path.GetTempPath(), "nats") : StoreDirectory;

    /// <summary>The memory limit in force: <see cref="MaxMemoryStore"/>, or 75% of the memory available to the process.</summary>
    public long EffectiveMaxMemoryStore => MaxMemoryStore > 0 ? MaxMemoryStore : DefaultMaxMemoryStore;

    /// <summary>The disk limit in force.</summary>
    public long EffectiveMaxFileStore => MaxFileStore > 0 ? MaxFileStore : 1L << 40;

    /// <summary>A copy.</summary>
    /// <returns>The copy.</returns>
    public JetStreamOptions Clone() => (JetStreamOptions)MemberwiseClone();
}
