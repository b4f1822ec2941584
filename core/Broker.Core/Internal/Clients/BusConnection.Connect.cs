using Broker.Abstractions;
using Broker.Core.Internal.Auth;

using ClosedState = Broker.Core.Internal.Clients.CloseReason;

namespace Broker.Core.Internal.Clients;

/// <summary>
/// Authentication of an adapter's connection, as a NATS CONNECT is authenticated (<see cref="NatsClient"/>.Connect.cs),
/// and again after a configuration reload (nats-server <c>reloadAuthorization</c>): the new users decide whether the
/// connection may stay, and its permissions and subscriptions follow the new configuration.
/// </summary>
internal sealed partial class BusConnection
{
    private const string AuthorizationViolationText = "Authorization Violation";
    private const string MaxConnectionsText = "maximum connections exceeded";

    // nats-server's ErrTooManyAccountConnections.
    private const string MaxAccountConnectionsText = "maximum account active connections exceeded";

    private readonly Credentials credentials;

    /// <summary>
    /// Authenticates and opens an adapter's connection in its user's account (or the account the adapter names for a
    /// client it vouches for); a refused one is remembered among the closed.
    /// </summary>
    /// <exception cref="ArgumentException">The adapter vouches for the client and names no account the broker has.</exception>
    public static BusConnectResult Connect(BrokerCore server, TransportConnection connection, BusConnectOptions options)
    {
        var credentials = Credentials.From(connection, options);

        // Before anything counts: a name no account has is the adapter's mistake, not the client's.
        var vouched = credentials.ByAdapter ? MessageBus.ResolveAccount(server, options.Account, nameof(options)) : null;
        var user = Authenticate(server.Authenticator, connection, credentials, vouched);
        var client = new BusConnection(server, connection, options, credentials, user);

        // nats-server creates the client before it authenticates and admits it: a refused one counts and shows as closed.
        Interlocked.Increment(ref server.Statistics.TotalConnections);
        var account = vouched ?? (user is not null && server.Accounts.TryGet(user.Account, out var found) ? found : null);
        if (user is null || account is null)
        {
            // No account by the user's account name: only while a reload swaps the users and accounts.
            InProcessLog.AuthorizationViolation(client.logger, client);
            client.CloseRefused(ClosedState.AuthenticationViolation.ToText());
            return BusConnectResult.Failure(BusConnectError.AuthorizationViolation, AuthorizationViolationText);
        }

        // The account's max_connections, as nats-server's registerWithAccount checks it once the user is known (a
        // refused client stays in the account, for /connz). Bound before the client is registered, so nothing sees it
        // in $G.
        if (!client.BindAccount(account))
        {
            InProcessLog.MaxAccountConnectionsExceeded(client.logger, client, account.Name);
            client.CloseRefused(ClosedState.MaxAccountConnectionsExceeded.ToText());
            return BusConnectResult.Failure(BusConnectError.MaxConnectionsExceeded, MaxAccountConnectionsText);
        }

        // Checked and taken as one step with every other connection's (BrokerCore.TryAdmit), so a flood of MQTT,
        // WebSocket and NATS clients together gets exactly the free places.
        if (!server.TryAdmit(client))
        {
            client.ReleaseAccount();
            InProcessLog.MaxConnectionsExceeded(client.logger, client);
            client.CloseRefused(ClosedState.MaxConnectionsExceeded.ToText());
            return BusConnectResult.Failure(BusConnectError.MaxConnectionsExceeded, MaxConnectionsText);
        }

        server.Events?.ClientConnected(client);
        return BusConnectResult.Success(client);
    }

    /// <summary>
    /// Applies a new authenticator (and the accounts reloaded with it) to this connection. Called from the reloading
    /// thread. As nats-server's <c>reloadAuthorization</c>: a user gone or now in another account is closed (<c>Client
    /// Closed</c>; it reconnects into its new account), one whose credentials no longer authenticate is closed as an
    /// authorization violation, and a client the adapter vouched for is closed when its account is gone.
    /// </summary>
    public void ApplyReload(Authenticator previous, Authenticator current)
    {
        if (IsClosed)
        {
            return;
        }

        if (credentials.ByAdapter)
        {
            if (!StillInAccount(Account.Name))
            {
                InProcessLog.AccountChanged(logger, this, Account.Name);
                CloseByBroker(ClosedState.ClientClosed.ToText(), abortTransport: false);
            }

            return;
        }

        // As nats-server (clientHasMovedToDifferentAccount) and as NatsClient: a user gone or moved to another account is
        // closed and reconnects into its new account, if any; only then are the credentials checked again.
        if (AuthorizedUser is { } name && current.AccountOf(name) != Account.Name)
        {
            InProcessLog.AccountChanged(logger, this, Account.Name);
            CloseByBroker(ClosedState.ClientClosed.ToText(), abortTransport: false);
            return;
        }

        var user = ReauthenticateWith(previous, current);
        if (user is null)
        {
            InProcessLog.AuthorizationViolation(logger, this);
            CloseByBroker(ClosedState.AuthenticationViolation.ToText(), abortTransport: false);
            return;
        }

        if (!StillInAccount(user.Account))
        {
            InProcessLog.AccountChanged(logger, this, Account.Name);
            CloseByBroker(ClosedState.ClientClosed.ToText(), abortTransport: false);
            return;
        }

        AuthorizedUser = user.Name;
        var permissions = user.Permissions?.CreateForConnection();
        lock (PublishLock)
        {
            // The publish decision cache belongs to the publishing side, which holds this lock.
            Permissions = permissions;
        }

        foreach (var subscription in ApplyToSubscriptions(permissions))
        {
            InProcessLog.SubscriptionRemovedOnReload(logger, this, subscription.SubjectString);
        }
    }

    /// <summary>Whether <paramref name="accountName"/> is still the client's account, the same instance the registry holds.</summary>
    private bool StillInAccount(string accountName)
        => accountName == Account.Name && Server.Accounts.TryGet(accountName, out var registered) && ReferenceEquals(registered, Account);

    /// <summary>
    /// The user the credentials prove, or <see langword="null"/>: with <c>verify_and_map</c> and a users list the client
    /// certificate names the user (nats-server ignores other credentials then), otherwise the users, the token or the
    /// single user decide.
    /// </summary>
    private static AuthenticatedUser? Authenticate(Authenticator authenticator, TransportConnection connection, Credentials credentials, Accounts.Account? vouched)
    {
        if (vouched is not null)
        {
            return new AuthenticatedUser(credentials.User, null, vouched.Name);
        }

        if (credentials.CertificateMapped && authenticator.MapsCertificates)
        {
            return connection.Features.Get<ITlsConnectionFeature>()?.ClientCertificate is { } certificate
                ? authenticator.AuthenticateCertificate(certificate)
                : null;
        }

        return authenticator.Authenticate(credentials.User, credentials.Password, credentials.Token, credentials.NoAuthUser);
    }

    private AuthenticatedUser? ReauthenticateWith(Authenticator previous, Authenticator current)
    {
        if (credentials.CertificateMapped && current.MapsCertificates)
        {
            return Tls?.ClientCertificate is { } certificate ? current.AuthenticateCertificate(certificate) : null;
        }

        return current.Reauthenticate(previous, credentials.User, credentials.Password, credentials.Token, credentials.NoAuthUser);
    }

    /// <summary>What the connection authenticated with, kept to authenticate again after a reload.</summary>
    private sealed record Credentials(string? User, string? Password, string? Token, bool CertificateMapped, bool ByAdapter, string? NoAuthUser = null)
    {
        // Anonymous clients (most MQTT devices) share one instance of their kind instead of keeping one each (56 B;
        // issue 25): a record's values are all it holds.
        private static readonly Credentials Anonymous = new(null, null, null, CertificateMapped: false, ByAdapter: false);
        private static readonly Credentials AnonymousByAdapter = new(null, null, null, CertificateMapped: false, ByAdapter: true);

        /// <summary>
        /// The adapter's credentials, each empty one taken from the transport's (WebSocket cookies) as for NATS;
        /// certificate mapping when the listener's TLS says <c>verify_and_map</c>.
        /// </summary>
        public static Credentials From(TransportConnection connection, BusConnectOptions options)
        {
            if (options.AuthenticatedByAdapter)
            {
                return Shared(new Credentials(Empty(options.User), null, null, CertificateMapped: false, ByAdapter: true));
            }

            var fromTransport = connection.Features.Get<TransportCredentials>();
            var mapped = connection.Features.Get<ITlsConnectionFeature>() is { MapClientCertificateToUser: true };
            return Shared(new Credentials(
                OrElse(options.User, fromTransport?.User),
                OrElse(options.Password, fromTransport?.Password),
                OrElse(options.Token, fromTransport?.Token),
                mapped,
                ByAdapter: false,
                Empty(options.NoAuthUser)));
        }

        private static Credentials Shared(Credentials made) =>
            made == Anonymous ? Anonymous : made == AnonymousByAdapter ? AnonymousByAdapter : made;

        private static string? OrElse(string? value, string? fallback) => string.IsNullOrEmpty(value) ? Empty(fallback) : value;

        private static string? Empty(string? value) => string.IsNullOrEmpty(value) ? null : value;
    }
}
