using System.Buffers;
using Broker.Core.Internal.Accounts;
using Broker.Core.Internal.Auth;
using Broker.Core.Internal.Subscriptions;

namespace Broker.Core.Internal.Clients;

/// <summary>
/// What every client of the broker shares: identity, CONNECT flags, permissions, subscriptions, statistics and
/// the publish path (<see cref="ClientBase"/>.Publish.cs). Subclasses decide how a delivery reaches the peer.
/// </summary>
internal abstract partial class ClientBase
{
    /// <param name="server">The broker.</param>
    /// <param name="kind">What kind of client this is.</param>
    /// <param name="account">
    /// The account of an internal client, fixed for its lifetime and not counted against the account's
    /// <c>max_connections</c> (nats-server counts only client and leaf connections); <see langword="null"/> for
    /// <c>$G</c> until <see cref="BindAccount(Account)"/>.
    /// </param>
    /// <param name="assignId">
    /// Whether the client takes a connection id; an account's internal client does not, as nats-server's has none.
    /// </param>
    protected ClientBase(BrokerCore server, ClientKind kind, Account? account = null, bool assignId = true)
    {
        Server = server;
        Kind = kind;
        Id = assignId ? server.NextClientId() : 0;
        startedAt = DateTime.UtcNow;
        Account = account ?? server.Accounts.Global;
    }

    public BrokerCore Server { get; }

    public ClientKind Kind { get; }

    /// <summary>
    /// The account the client publishes and subscribes in: <c>$G</c> until authentication binds it to its user's
    /// account, which happens once, before its first publish or subscription.
    /// </summary>
    public Account Account { get; private set; }

    // 1 while this client counts against its account's max_connections.
    private int accountAdmitted;

    /// <summary>
    /// Moves the client into <paramref name="account"/> and counts it against the account's <c>max_connections</c>;
    /// false when that limit is reached: the client is then in the account (as nats-server's, for /connz) without
    /// counting against it, and must be closed. Called after authentication, before the client's first publish or
    /// subscription, and again when a client authenticates again (a second CONNECT): in the same account it keeps its
    /// place; into another, it gives its place back and loses its subscriptions, which were made in the other
    /// account's subject space (nats-server leaves them in the old account's index, still receiving).
    /// </summary>
    public bool BindAccount(Account account)
    {
        ArgumentNullException.ThrowIfNull(account);
        if (ReferenceEquals(account, Account) && Volatile.Read(ref accountAdmitted) == 1)
        {
            return true;
        }

        ReleaseAccount();
        if (!ReferenceEquals(account, Account))
        {
            RemoveAllSubscriptions();
            Account = account;
            if (producer is { } batch)
            {
                batch.MatchCache.Forget();
            }
        }

        if (!account.TryAdmitConnection())
        {
            return false;
        }

        Volatile.Write(ref accountAdmitted, 1);
        return true;
    }

    /// <summary>
    /// Binds the client to the account an authenticated user belongs to (nats-server <c>registerWithAccount</c>),
    /// looked up by name in the broker's accounts.
    /// </summary>
    public AccountBindOutcome BindAccount(AuthenticatedUser user)
    {
        ArgumentNullException.ThrowIfNull(user);

        // A reload may have removed the account between authentication and here; the user is then gone too.
        if (!Server.Accounts.TryGet(user.Account, out var account))
        {
            return AccountBindOutcome.NoSuchAccount;
        }

        return BindAccount(account) ? AccountBindOutcome.Bound : AccountBindOutcome.MaxConnections;
    }

    /// <summary>Releases the client's place in its account's connection count; safe to call more than once.</summary>
    public void ReleaseAccount()
    {
        if (Interlocked.Exchange(ref accountAdmitted, 0) == 1)
        {
            Account.ReleaseConnection();
        }
    }

    /// <summary>The connection id (<c>cid</c>), unique for the server's lifetime.</summary>
    public ulong Id { get; }

    // A UTC DateTime (8 B) rather than a DateTimeOffset (16 B with its offset) on every client (issue 25).
    private readonly DateTime startedAt;

    public DateTimeOffset StartedAt => new(startedAt, TimeSpan.Zero);

    /// <summary>Deliver this client's own publishes to its matching subscriptions (CONNECT <c>echo</c>).</summary>
    public bool Echo { get; protected set; } = true;

    /// <summary>The client understands HMSG (CONNECT <c>headers</c>); otherwise headers are stripped.</summary>
    public bool SupportsHeaders { get; protected set; }

    /// <summary>The client wants a 503 status when a request finds no subscriber (CONNECT <c>no_responders</c>).</summary>
    public bool NoResponders { get; protected set; }

    /// <summary>Permissions of the authenticated user, or <see langword="null"/> for full permissions.</summary>
    public ClientPermissions? Permissions { get; protected set; }

    public string? Name { get; protected set; }

    public string? AuthorizedUser { get; protected set; }

    /// <summary>
    /// Whether this is the system account's own client: what it publishes is not counted in the server's inbound
    /// messages (/varz <c>in_msgs</c>), as nats-server does not count its internal system client's.
    /// </summary>
    public bool IsSystemClient { get; init; }

    // Statistics, updated with Interlocked by the reading side (in) and by producers (out).
    public long InMessages;
    public long InBytes;
    public long OutMessages;
    public long OutBytes;

    /// <summary>
    /// Delivers one message for one of this client's subscriptions. Runs on the producer's thread; must not block.
    /// Implementations that buffer output call <see cref="AddPendingFlush"/> on <paramref name="producer"/> so the
    /// output is flushed once after the producer's batch.
    /// </summary>
    public abstract void Deliver(
        ClientBase producer,
        Subscription subscription,
        ReadOnlySpan<byte> subject,
        ReadOnlySpan<byte> replyTo,
        in ReadOnlySequence<byte> headers,
        in ReadOnlySequence<byte> payload);

    /// <summary>
    /// Sends buffered deliveries to the peer; called once per producer batch. Returns a task when the peer is far
    /// behind (three quarters of max_pending or more waiting): the producer should stall briefly on it, as
    /// nats-server stalls fast producers, before writing more.
    /// </summary>
    public virtual Task? FlushOutput() => null;

    /// <summary>Whether the client is closing or closed; deliveries to it are dropped.</summary>
    public abstract bool IsClosed { get; }
}

/// <summary>The outcome of <see cref="ClientBase.BindAccount(AuthenticatedUser)"/>.</summary>
internal enum AccountBindOutcome
{
    Bound,

    /// <summary>The account's <c>max_connections</c> is reached: <c>maximum account active connections exceeded</c>.</summary>
    MaxConnections,

    /// <summary>The account is no longer configured (a reload removed it after the user authenticated).</summary>
    NoSuchAccount,
}
