using System.Collections.Concurrent;
using Broker.Core.Internal.Accounts;
using Broker.Core.Internal.Auth;
using Broker.Core.Internal.Auth.Callout;
using Broker.Core.Internal.Clients;
using Broker.Core.Internal.Monitoring;
using Microsoft.Extensions.Logging;

namespace Broker.Core.Internal;

/// <summary>
/// The broker's shared state: options, subject index, authenticator, client registry and counters.
/// One per broker server; every client holds a reference to it.
/// </summary>
internal sealed partial class BrokerCore
{
    private readonly Task<NATS.NKeys.KeyPair> curveKey;
    private long nextClientId;
    private long nextFlushStamp;

    public BrokerCore(BrokerOptions options, ILoggerFactory loggerFactory)
    {
        Options = options;
        LoggerFactory = loggerFactory;
        Logger = loggerFactory.CreateLogger("Broker.Core");
        // As nats-server: the server id is the public key of the server's own NKey, which signs its JWTs (auth callout requests).
        ServerKey = NATS.NKeys.KeyPair.CreatePair(NATS.NKeys.PrefixByte.Server);
        ServerId = ServerKey.GetPublicKey();
        ServerName = options.ServerName ?? ServerId;

        // As nats-server 2.10: a curve key made at start, its public key in every INFO; it seals auth callout requests.
        // Made on the thread pool: NATS.NKeys' X25519 pair costs ~1-2.5 ms and ~0.9 MB of allocations that the start's
        // own thread need not wait for; its first user (INFO, set up once the listener is bound; an auth callout)
        // waits for it if it is not done (docs/benchmarks.md, "start8").
        curveKey = Task.Run(static () => NATS.NKeys.KeyPair.CreatePair(NATS.NKeys.PrefixByte.Curve));
        ClientLogger = loggerFactory.CreateLogger("Broker.Client");
        Accounts = new AccountRegistry(options.Accounts, options.Mappings, AccountRegistry.SystemAccountName(options));
        if (options.Operator.IsEnabled)
        {
            JwtAccounts = new JwtAccounts(options.Operator, Accounts);
            JwtAccounts.LogImportsTo(Logger);
            JwtAccounts.LoadSystemAccount();
            JwtAccounts.Expired += CloseExpiredAccount;
            JwtAccounts.Updated += ApplyClaimsUpdate;
            JwtAccounts.ImportsChanged += RebuildShadows;
        }

        SystemOnlyNoAuthUser = ServerIdentity.NewSystemOnlyNoAuthUser();
        Authenticator = CreateAuthenticator(options, Logger);
        ClosedClients = new ClosedConnectionRing(options.MaxClosedClients);
        Accounts.Attach(this);
        LeafNodes = Leaf.LeafNodes.Create(this);
        Routes = Internal.Routes.ClusterRoutes.Create(this);
        AuthCallout = options.Authorization.AuthCallout is not null || options.Operator.IsEnabled ? new AuthCallout(this, options.Authorization.AuthCallout) : null;
    }

    /// <summary>The server's NKey (<see cref="ServerId"/> is its public key); it signs auth callout requests.</summary>
    public NATS.NKeys.KeyPair ServerKey { get; }

    /// <summary>The server's curve key (nats-server's <c>xkp</c>): its public key is INFO's <c>xkey</c>; it seals and opens auth callout messages.</summary>
    /// <remarks>Waits for the key when it is still being made (a task not yet started runs on the caller's thread).</remarks>
    public NATS.NKeys.KeyPair CurveKey => curveKey.IsCompletedSuccessfully ? curveKey.Result : curveKey.GetAwaiter().GetResult();

    /// <summary>The authorization callout when <c>auth_callout</c> is configured or in operator mode (account JWTs enable it), else null (a reload cannot change it).</summary>
    public AuthCallout? AuthCallout { get; }

    public ILogger ClientLogger { get; }

    /// <summary>The routes to other cluster members, or null when <c>cluster</c> is off (a reload cannot turn it on).</summary>
    public Internal.Routes.ClusterRoutes? Routes { get; }

    /// <summary>The leaf node remotes, or null when none is configured (a reload cannot add them).</summary>
    public Leaf.LeafNodes? LeafNodes { get; }

    /// <summary>Operator mode's accounts (trusted keys, resolver, JWT accounts), or null outside operator mode.</summary>
    public JwtAccounts? JwtAccounts { get; }

    // nats-server expiredTimeout: the account's clients are closed when its JWT expires.
    private void CloseExpiredAccount(Account account)
    {
        foreach (var client in Clients.Values)
        {
            if (ReferenceEquals(client.Account, account) && client is NatsClient nats)
            {
                nats.CloseForAccountExpired();
            }
        }
    }

    /// <summary>Checks credentials; replaced as a whole on reload.</summary>
    public Authenticator Authenticator { get; set; }

    /// <summary>The options in force. Replaced as a whole on reload, never mutated.</summary>
    public BrokerOptions Options { get; set; }

    public ILoggerFactory LoggerFactory { get; }

    public ILogger Logger { get; }

    public string ServerId { get; }

    public string ServerName { get; }

    /// <summary>
    /// Eight characters naming the server in replies (nats-server's <c>getHash</c> of its name: the first bytes of its
    /// SHA-256, each as one of 62 digits).
    /// </summary>
    public string ServerHash => serverHash ??= string.Create(8, ServerName, static (chars, name) =>
    {
        const string Digits = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
        var hash = System.Security.Cryptography.SHA256.HashData(System.Text.Encoding.UTF8.GetBytes(name));
        for (var i = 0; i < chars.Length; i++)
        {
            chars[i] = Digits[hash[i] % Digits.Length];
        }
    });

    /// <summary>The accounts, each with its own subject index (<c>$G</c> when none is configured).</summary>
    public AccountRegistry Accounts { get; }

    // Shrinks once most clients have gone (a burst of 10,000 left a 140 KB bucket array behind; issue 25).
    private readonly ShrinkingDictionary<ulong, ClientBase> clients = new();

    /// <summary>The admitted clients by id: read only; <see cref="TryAdmit"/> and <see cref="Unregister"/> change it.</summary>
    public ConcurrentDictionary<ulong, ClientBase> Clients => clients.Current;

    /// <summary>
    /// The name of the <c>$G</c> user nats-server invents when only <c>$G</c> and a configured system account exist
    /// (server.go <c>configureAccounts</c>); one per broker, so a reload keeps its clients.
    /// </summary>
    public string SystemOnlyNoAuthUser { get; }

    /// <summary>The authenticator for <paramref name="options"/>, with the invented no-auth user when nats-server would have it.</summary>
    /// <exception cref="InvalidOperationException">The options are inconsistent.</exception>
    public Authenticator CreateAuthenticator(BrokerOptions options, ILogger logger)
    {
        var invent = AccountRegistry.SystemAccountConfigured(options) && options.Accounts.Count == 1
            && string.IsNullOrEmpty(options.Authorization.NoAuthUser) && !options.Operator.IsEnabled;
        return new Authenticator(options.Authorization, options.Accounts, logger, systemOnlyNoAuthUser: invent ? SystemOnlyNoAuthUser : null, jwtAccounts: JwtAccounts);
    }

    public ServerStatistics Statistics { get; } = new();

    private volatile Events.SystemEvents? events;
    private string? serverHash;

    /// <summary>
    /// The system account's events while its services run, else null: connect and close paths enqueue through it
    /// (a null check when there is no system account).
    /// </summary>
    public Events.SystemEvents? Events
    {
        get => events;
        set => events = value;
    }

    public ulong NextClientId() => (ulong)Interlocked.Increment(ref nextClientId);

    /// <summary>A stamp unique to one producer batch (see <see cref="ClientBase.AddPendingFlush"/>).</summary>
    public long NextFlushStamp() => Interlocked.Increment(ref nextFlushStamp);
}
