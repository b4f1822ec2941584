using Broker.Abstractions;
using Broker.Core.Auth;
using Broker.Core.Internal.Jwt;
using Broker.Core.Internal.Subscriptions;

namespace Broker.Core.Internal.Accounts;

/// <summary>
/// One tenant: its own subject index, so clients of different accounts never see each other's subscriptions, and
/// its limits with the count of connections they are checked against (nats-server's <c>Account</c>). The same
/// instance lives as long as the account is configured: a reload changes its limits, never its subscriptions.
/// </summary>
internal sealed class Account
{
    /// <summary>The global account's name: clients of no configured account are in it (nats-server's <c>$G</c>).</summary>
    public const string GlobalName = "$G";

    /// <summary>The default system account's name (nats-server's <c>DEFAULT_SYSTEM_ACCOUNT</c>).</summary>
    public const string SystemDefaultName = "$SYS";

    private int connections;
    private volatile AccountLimits limits;
    private volatile StreamImport[] streamImports = [];
    private volatile SubjectMapper? mappings;
    private volatile ServiceImport[] serviceImports = [];
    private AccountImportClient? importClient;
    private volatile Task? settling;

    public Account(string name, AccountLimits limits, string? nkey = null, SubjectMapper? mappings = null)
    {
        Name = name;
        Nkey = nkey;
        this.limits = limits;
        this.mappings = mappings;
        Responses = new ResponseRoutes(this);
        ReverseRoutes = new ReverseRoutes(this);
    }

    public string Name { get; }

    /// <summary>The account's public NKey, when configured.</summary>
    public string? Nkey { get; private set; }

    public bool IsGlobal => Name == GlobalName;

    /// <summary>Whether this is the system account (set once, when the registry is built).</summary>
    public bool IsSystem { get; set; }

    /// <summary>The account's subject index; every subscription of its clients is here and nowhere else.</summary>
    public SubList SubList { get; } = new();

    /// <summary>
    /// The account's stream imports (empty when none): a subscription matching one also subscribes in the exporter.
    /// Replaced as a whole at start and on reload; read without a lock.
    /// </summary>
    public StreamImport[] StreamImports => streamImports;

    /// <summary>The account's stream exports as configured: subject and the accounts allowed (null when public).</summary>
    public IReadOnlyList<(string Subject, string[]? Accounts)> StreamExports { get; private set; } = [];

    /// <summary>Takes the stream imports and exports of the configuration being applied.</summary>
    public void SetStreams(StreamImport[] imports, IReadOnlyList<(string Subject, string[]? Accounts)> exports)
    {
        streamImports = imports;
        StreamExports = exports;
    }

    /// <summary>
    /// The account's service imports (empty when none), each a subscription of <see cref="ImportClient"/> on its
    /// <c>from</c>. Replaced as a whole at start and on reload.
    /// </summary>
    public ServiceImport[] ServiceImports => serviceImports;

    /// <summary>The account's service exports as configured (empty when none).</summary>
    public ServiceExport[] ServiceExports { get; private set; } = [];

    /// <summary>The routes back to requesters of this account's services.</summary>
    public ResponseRoutes Responses { get; }

    /// <summary>The routes back to this account's requesters, by their reply (removed when the interest goes).</summary>
    public ReverseRoutes ReverseRoutes { get; }

    /// <summary>Takes the service imports and exports of the configuration being applied (subscribed by <see cref="SubscribeServices"/>).</summary>
    public void StageServices(ServiceImport[] imports, ServiceExport[] exports)
    {
        ServiceExports = exports;
        serviceImports = imports;
    }

    /// <summary>Replaces the import client's subscriptions with one per service import now staged.</summary>
    public void SubscribeServices(BrokerCore core)
    {
        var imports = serviceImports;
        if (imports.Length > 0 || importClient is not null)
        {
            ImportClient(core).SetImports(imports);
        }
    }

    /// <summary>The account's internal client, made at first use (nats-server's <c>internalClient</c>).</summary>
    public AccountImportClient ImportClient(BrokerCore core)
    {
        var client = importClient;
        if (client is not null)
        {
            return client;
        }

        var created = new AccountImportClient(core, this);
        return Interlocked.CompareExchange(ref importClient, created, null) ?? created;
    }

    /// <summary>The limits in force; replaced as a whole on reload.</summary>
    public AccountLimits Limits => limits;

    /// <summary>The account's JetStream limits when its configuration enables JetStream; null otherwise (and for $G).</summary>
    public AccountJetStreamLimits? JetStream { get; set; }

    /// <summary>
    /// While the plugins' account watchers apply a change of this account (<see cref="AccountDirectory"/>), the task
    /// of their calls; null otherwise, so a CONNECT into an unchanged account pays one null check for it.
    /// </summary>
    public Task? Settling => settling;

    /// <summary>Marks the account as changing until <paramref name="task"/> completes (under <c>AccountRegistry.sync</c>).</summary>
    public void Settle(Task task)
    {
        settling = task;
        _ = task.ContinueWith(
            static (done, state) => Interlocked.CompareExchange(ref ((Account)state!).settling, null, done),
            this,
            CancellationToken.None,
            TaskContinuationOptions.ExecuteSynchronously,
            TaskScheduler.Default);
    }

    /// <summary>
    /// The account's subject mappings, or null when it has none: every publish of its clients reads this once (one
    /// null check when there are none, as nats-server's <c>hasMappings</c>). Replaced as a whole on reload.
    /// </summary>
    public SubjectMapper? Mappings => mappings;

    /// <summary>Connections of the account now (admitted and not yet released).</summary>
    public int Connections => Volatile.Read(ref connections);

    /// <summary>Counts one more connection unless the account's <c>max_connections</c> is reached.</summary>
    public bool TryAdmitConnection()
    {
        while (true)
        {
            var current = Volatile.Read(ref connections);
            var max = limits.MaxConnections;
            if (max >= 0 && current >= max)
            {
                return false;
            }

            if (Interlocked.CompareExchange(ref connections, current + 1, current) == current)
            {
                return true;
            }
        }
    }

    /// <summary>Releases a connection counted by <see cref="TryAdmitConnection"/>.</summary>
    public void ReleaseConnection() => Interlocked.Decrement(ref connections);

    /// <summary>
    /// When the account's configuration was last applied, at start or by a reload (nats-server stamps every account
    /// on each configuration, changed or not): /accountz <c>update_time</c>.
    /// </summary>
    public DateTime UpdatedAt { get; private set; } = DateTime.UtcNow;

    /// <summary>
    /// In operator mode, the account's JWT in force (the account is named by its public key); null for accounts of the
    /// configuration.
    /// </summary>
    public AccountJwt? Jwt { get; private set; }

    /// <summary>Whether the account's JWT has expired (nats-server marks the account and closes its clients).</summary>
    public bool IsExpired => Volatile.Read(ref expired);

    private bool expired;

    /// <summary>Takes a verified account JWT: its limits and JetStream limits apply from now.</summary>
    public void ApplyJwt(AccountJwt jwt)
    {
        Jwt = jwt;
        limits = jwt.Limits();
        mappings = jwt.Mappings();
        JetStream = jwt.JetStream();
        UpdatedAt = DateTime.UtcNow;
    }

    /// <summary>Marks the account's JWT expired.</summary>
    public void MarkExpired() => Volatile.Write(ref expired, true);

    /// <summary>A valid JWT replaced an expired one (nats-server <c>checkExpiration</c>).</summary>
    public void ClearExpired() => Volatile.Write(ref expired, false);

    /// <summary>
    /// Locks new clients out after the resolver deleted the account's JWT (nats-server <c>removeCb</c>: every limit 0,
    /// JetStream off); the JWT stays for /accountz until a new one is pushed.
    /// </summary>
    public void Disable()
    {
        limits = new AccountLimits(0, 0, 0, 0);
        JetStream = null;
        UpdatedAt = DateTime.UtcNow;
    }

    /// <summary>Takes the limits, key and mappings of a reloaded configuration.</summary>
    public void Update(AccountLimits newLimits, string? nkey, SubjectMapper? newMappings)
    {
        limits = newLimits;
        Nkey = nkey;
        mappings = newMappings;
        UpdatedAt = DateTime.UtcNow;
    }
}

/// <summary>An account's limits; -1 means none of its own (nats-server's account <c>limits</c>).</summary>
internal sealed record AccountLimits(int MaxConnections, int MaxSubscriptions, int MaxPayload, int MaxLeafNodes)
{
    public static readonly AccountLimits None = new(-1, -1, -1, -1);

    public static AccountLimits From(AccountLimitOptions options) =>
        new(options.MaxConnections, options.MaxSubscriptions, options.MaxPayload, options.MaxLeafNodes);
}
