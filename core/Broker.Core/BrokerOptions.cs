using Broker.Core.Auth;

namespace Broker.Core;

/// <summary>
/// Settings of a broker. Defaults match nats-server's; every property states its default.
/// </summary>
public sealed class BrokerOptions
{
    /// <summary>Interface the NATS client listener binds to. Default <c>0.0.0.0</c> (all IPv4 interfaces).</summary>
    public string Host { get; set; } = "0.0.0.0";

    /// <summary>NATS client port. Default 4222; 0 picks a free port (nats-server's <c>-p -1</c>).</summary>
    public int Port { get; set; } = 4222;

    /// <summary>Server name reported in INFO. Default: the generated server id.</summary>
    public string? ServerName { get; set; }

    /// <summary>Largest message payload (headers included) a client may publish. Default 1 MiB.</summary>
    public int MaxPayload { get; set; } = 1024 * 1024;

    /// <summary>Longest protocol control line accepted. Default 4096 bytes.</summary>
    public int MaxControlLine { get; set; } = 4096;

    /// <summary>Bytes buffered for one client before it is closed as a slow consumer. Default 64 MiB.</summary>
    public long MaxPending { get; set; } = 64L * 1024 * 1024;

    /// <summary>How long one write to a client may block before it is closed as a slow consumer. Default 10 s.</summary>
    public TimeSpan WriteDeadline { get; set; } = TimeSpan.FromSeconds(10);

    /// <summary>Interval between server PINGs to an idle client. Default 2 minutes.</summary>
    public TimeSpan PingInterval { get; set; } = TimeSpan.FromMinutes(2);

    /// <summary>Unanswered PINGs after which a client is closed with <c>Stale Connection</c>. Default 2.</summary>
    public int MaxPingsOutstanding { get; set; } = 2;

    /// <summary>
    /// Most client connections at once, NATS, WebSocket and protocol adapters' (MQTT) together; more are refused with
    /// <c>maximum connections exceeded</c>. As in nats-server, 0 stands for the default and a negative value means no
    /// limit. Default 65536.
    /// </summary>
    public int MaxConnections { get; set; } = Internal.Clients.ConnectionAdmission.DefaultLimit;

    /// <summary>Most subscriptions per connection; 0 means unlimited. Default 0.</summary>
    public int MaxSubscriptions { get; set; }

    /// <summary>
    /// Most tokens a subscription subject may have; more are refused with a permissions violation. 0 means unlimited.
    /// Default 0.
    /// </summary>
    public int MaxSubTokens { get; set; }

    /// <summary>Whether headers (HPUB/HMSG) are disabled and <c>headers</c> is false in INFO. Default <see langword="false"/>.</summary>
    public bool NoHeaderSupport { get; set; }

    /// <summary>Authentication and authorization. Default: none (every client is accepted with full permissions).</summary>
    public AuthorizationOptions Authorization { get; set; } = new();

    /// <summary>
    /// Accounts besides the global account <c>$G</c> (nats-server's <c>accounts { }</c>), each an isolated subject space
    /// with its own users and limits. Default empty: every client is in <c>$G</c>.
    /// </summary>
    public IList<AccountOptions> Accounts { get; set; } = [];

    /// <summary>
    /// Subject mappings of the global account <c>$G</c> (nats-server's top-level <c>mappings { }</c>); an account's
    /// own are in <see cref="AccountOptions.Mappings"/>. Default empty.
    /// </summary>
    public IList<MappingOptions> Mappings { get; set; } = [];

    /// <summary>
    /// The system account, where the broker answers <c>$SYS.REQ.&gt;</c> requests and publishes its events (nats-server's
    /// <c>system_account</c>). It must name one of <see cref="Accounts"/>; its users are that account's users. Default
    /// <see langword="null"/>: an account named <c>$SYS</c> among <see cref="Accounts"/>, else a <c>$SYS</c> account
    /// without users is created (unless <see cref="NoSystemAccount"/>).
    /// </summary>
    public string? SystemAccount { get; set; }

    /// <summary>
    /// Whether no system account is created when <see cref="SystemAccount"/> is not set and no account is named
    /// <c>$SYS</c> (nats-server's <c>no_system_account</c>): no <c>$SYS</c> requests, no events. Default
    /// <see langword="false"/>.
    /// </summary>
    public bool NoSystemAccount { get; set; }

    /// <summary>
    /// Operator (JWT) mode: trusted operators, the account resolver and its preloaded account JWTs. Default: off.
    /// With it on, accounts and users are not configured here: they come from JWTs.
    /// </summary>
    public OperatorOptions Operator { get; set; } = new();

    /// <summary>Leaf node connections to hubs (nats-server's <c>leafnodes { }</c>). Default: none.</summary>
    public LeafNodeOptions LeafNodes { get; set; } = new();

    /// <summary>Routes to other cluster members (nats-server's <c>cluster { }</c>). Default: off.</summary>
    public ClusterOptions Cluster { get; set; } = new();

    /// <summary>The HTTP monitoring endpoint. Default: off.</summary>
    public MonitoringOptions Monitoring { get; set; } = new();

    /// <summary>
    /// Closed connections remembered, with their final statistics and close reason, for <c>/connz?state=closed</c>
    /// (nats-server's <c>max_closed_clients</c>). Default 10000; 0 remembers none.
    /// </summary>
    public int MaxClosedClients { get; set; } = 10_000;

    /// <summary>
    /// In lame duck mode, the time over which client connections are closed, grace period included, so clients
    /// do not all reconnect elsewhere at once (nats-server's <c>lame_duck_duration</c>). Default 2 minutes.
    /// </summary>
    public TimeSpan LameDuckDuration { get; set; } = TimeSpan.FromMinutes(2);

    /// <summary>
    /// In lame duck mode, how long to wait after telling clients before closing the first one
    /// (nats-server's <c>lame_duck_grace_period</c>). Must be shorter than <see cref="LameDuckDuration"/>.
    /// Default 10 seconds.
    /// </summary>
    public TimeSpan LameDuckGracePeriod { get; set; } = TimeSpan.FromSeconds(10);

    /// <summary>Creates a deep copy, so a running broker is unaffected by later changes to this instance.</summary>
    /// <returns>The copy.</returns>
    public BrokerOptions Clone()
    {
        var copy = (BrokerOptions)MemberwiseClone();
        copy.Authorization = Authorization.Clone();
        copy.Accounts = [.. Accounts.Select(a => a.Clone())];
        copy.Mappings = [.. Mappings.Select(m => m.Clone())];
        copy.Monitoring = Monitoring.Clone();
        copy.Operator = Operator.Clone();
        copy.LeafNodes = LeafNodes.Clone();
        copy.Cluster = Cluster.Clone();
        return copy;
    }

    /// <summary>Checks the settings for values nats-server refuses at startup.</summary>
    /// <exception cref="InvalidOperationException">A setting is out of range; the message names it.</exception>
    public void Validate()
    {
        if (Port is < 0 or > 65535)
        {
            throw new InvalidOperationException($"port: {Port} is not a valid port number");
        }

        if (MaxPayload <= 0)
        {
            throw new InvalidOperationException("max_payload: must be greater than 0");
        }

        if (MaxPayload > MaxPending)
        {
            throw new InvalidOperationException($"max_payload ({MaxPayload}) cannot be higher than max_pending ({MaxPending})");
        }

        if (MaxControlLine <= 0)
        {
            throw new InvalidOperationException("max_control_line: must be greater than 0");
        }

        // A negative max_connections is valid: no limit, as nats-server reads it.
        if (MaxSubscriptions < 0 || MaxSubTokens < 0 || MaxPingsOutstanding <= 0)
        {
            throw new InvalidOperationException("max_subscriptions and max_sub_tokens must not be negative, ping_max must be at least 1");
        }

        if (MaxClosedClients < 0)
        {
            throw new InvalidOperationException("max_closed_clients: must not be negative");
        }

        if (LameDuckDuration <= TimeSpan.Zero || LameDuckGracePeriod < TimeSpan.Zero)
        {
            throw new InvalidOperationException("lame_duck_duration must be positive and lame_duck_grace_period not negative");
        }

        if (LameDuckGracePeriod >= LameDuckDuration)
        {
            throw new InvalidOperationException(
                $"lame duck grace period ({Internal.Monitoring.GoFormat.Duration(LameDuckGracePeriod)}) should be strictly lower than lame duck duration ({Internal.Monitoring.GoFormat.Duration(LameDuckDuration)})");
        }

        Operator.Validate(this);
        if (SystemAccount is { } system && !Operator.IsEnabled && !Accounts.Any(a => a.Name == system))
        {
            // nats-server refuses to start: the system account is looked up among the configured ones.
            throw new InvalidOperationException("error resolving system account: account missing");
        }

        Authorization.Validate(Accounts);
        Internal.Accounts.ImportsCompiler.Validate(Accounts);
        if (Internal.Accounts.AccountRegistry.SystemAccountName(this) is null
            && Accounts.SelectMany(a => a.Exports.Services).FirstOrDefault(e => e.Latency is not null) is { } tracked)
        {
            // opts.go: latency samples are published through the system account's events.
            throw new InvalidOperationException($"Error adding service latency sampling for \"{tracked.Subject}\": system account not setup");
        }

        ValidateMappings(Mappings);
        foreach (var account in Accounts)
        {
            ValidateMappings(account.Mappings);
        }

        Monitoring.Validate();
        LeafNodes.Validate(this);
        Cluster.Validate();
        if (Cluster.IsEnabled && Operator.IsEnabled)
        {
            throw new InvalidOperationException("cluster: routes in operator mode are not supported yet");
        }
    }

    private static void ValidateMappings(IEnumerable<MappingOptions> mappings)
    {
        foreach (var mapping in mappings)
        {
            try
            {
                mapping.Validate();
            }
            catch (InvalidOperationException ex)
            {
                throw new InvalidOperationException($"Error adding mapping for \"{mapping.Source}\" : {ex.Message}", ex);
            }
        }
    }
}
