namespace Broker.JetStream;

/// <summary>
/// JetStream's settings: nats-server's <c>jetstream { store_dir, max_memory_store, max_file_store, domain, limits }</c>
/// block, the top-level <c>store_dir</c> and <c>default_js_domain</c>, and the <c>-js</c>/<c>-sd</c> flags. Every
/// default matches nats-server's.
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

    /// <summary>
    /// The maximum pending acknowledgements of any consumer (<c>limits { max_ack_pending }</c>), also the default of
    /// consumers that set none when it is below 1,000; 0 means none. Default 0.
    /// </summary>
    public int MaxAckPending { get; set; }

    /// <summary>
    /// The largest batch a pull request may ask for (<c>limits { max_request_batch }</c>), also the default
    /// <c>max_batch</c> of pull consumers; 0 means none. Default 0.
    /// </summary>
    public int MaxRequestBatch { get; set; }

    /// <summary>
    /// The longest duplicate window a stream may have (<c>limits { duplicate_window }</c>), also the default when it is
    /// below two minutes; zero means none. Default zero.
    /// </summary>
    public TimeSpan MaxDuplicateWindow { get; set; }

    /// <summary>
    /// nats-server's <c>default_js_domain</c>: JetStream domains per account (here only <c>$G</c>) whose API requests a
    /// server without JetStream forwards from <c>$JS.API.&gt;</c> to <c>$JS.&lt;domain&gt;.API.&gt;</c>, so that
    /// clients reach the JetStream of the domain (through a leaf node). Ignored, with a warning, while JetStream is
    /// enabled here. Default empty.
    /// </summary>
    public IReadOnlyDictionary<string, string> DefaultDomains { get; set; } = new Dictionary<string, string>();

    /// <summary>
    /// Whether API requests with a field no model knows are refused (<c>strict</c>, nats-server 2.11's key) with 400 /
    /// 10025 <c>invalid JSON: json: unknown field "x"</c>, as nats-server 2.12 does by default. Default
    /// <see langword="false"/>: such fields are ignored, as nats-server 2.9 and 2.10 do (this broker presents 2.10).
    /// </summary>
    public bool Strict { get; set; }

    /// <summary><see cref="MaxDuplicateWindow"/> in nanoseconds, as stream configurations count it.</summary>
    internal long MaxDuplicateWindowNanoseconds => MaxDuplicateWindow.Ticks * 100;

    /// <summary>
    /// Settings of nats-server's <c>jetstream</c> block that change nothing on a single server (<c>unique_tag</c>,
    /// <c>max_outstanding_catchup</c>, <c>limits { max_ha_assets }</c>, ...): logged as ignored when JetStream starts.
    /// (The file store's <c>cipher</c>, <c>key</c> and <c>sync_interval</c> are refused instead: they belong in its
    /// <c>filestore</c> block.) Default empty.
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
