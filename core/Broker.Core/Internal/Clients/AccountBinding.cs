using Broker.Core.Internal.Accounts;
using Broker.Core.Internal.Auth;
using Broker.Core.Internal.Logging;
using Broker.Core.Internal.Protocol;
using Microsoft.Extensions.Logging;

namespace Broker.Core.Internal.Clients;

/// <summary>
/// The account side of a NATS connection (nats-server <c>registerWithAccount</c>, <c>applyAccountLimits</c> and
/// <c>clientHasMovedToDifferentAccount</c>): binding after authentication, the INFO a lower account payload limit
/// calls for, and what a reload means for the account a connection is in. Each check logs what it found and returns
/// the reason to close with (<see cref="CloseReason.None"/> to stay); closing is left to the connection.
/// </summary>
internal static class AccountBinding
{
    /// <summary>Binds the connection to its user's account, counting it against the account's <c>max_connections</c>.</summary>
    public static CloseReason Bind(NatsClient client, AuthenticatedUser user, ILogger logger)
    {
        switch (client.BindAccount(user))
        {
            case AccountBindOutcome.Bound:
                return CloseReason.None;
            case AccountBindOutcome.MaxConnections:
                ClientLog.MaxAccountConnectionsExceeded(logger, client, client.Account.Name);
                return CloseReason.MaxAccountConnectionsExceeded;
            default:
                ClientLog.AuthorizationViolation(logger, client);
                return CloseReason.AuthenticationViolation;
        }
    }

    /// <summary>The -ERR a connection refused by <see cref="Bind"/> or <see cref="Reauthenticate"/> is closed with.</summary>
    public static ReadOnlySpan<byte> Error(CloseReason reason) => reason switch
    {
        CloseReason.MaxAccountConnectionsExceeded => ServerMessages.ErrMaxAccountConnections,
        CloseReason.AuthenticationViolation => ServerMessages.ErrAuthorization,
        _ => default,
    };

    /// <summary>
    /// At the first PONG to a protocol-1 client whose account lowers <c>max_payload</c>, the INFO announcing it (the
    /// one at connect time carried the server's), as nats-server's <c>processPing</c>; otherwise null.
    /// </summary>
    public static byte[]? InfoAfterFirstPong(NatsClient client, ConnectOptions options) =>
        options.TakeFirstInfoPong() && ClientLimits.LowersMaxPayload(client.Server.Options, client.Account, client.JwtUser?.MaxPayload ?? -1)
            ? client.Server.CreateClientInfo(client).ToArray()
            : null;

    /// <summary>
    /// The user a connection is under a reloaded configuration, checked in nats-server's order, or null with the reason
    /// to close: its user gone or now in another account closes it without -ERR ("Client Closed", to reconnect into
    /// its new account if it has one: <c>clientHasMovedToDifferentAccount</c>); then its credentials are checked again
    /// (Authorization Violation); then its account's place (<see cref="CheckLimitAfterReload"/>).
    /// </summary>
    public static AuthenticatedUser? Reauthenticate(NatsClient client, ClientAuthentication authentication, Authenticator previous, Authenticator current, ILogger logger, out CloseReason refusal)
    {
        // In operator mode the account is the user JWT's, checked again below with the same JWT and nonce signature.
        if (!current.ChecksJwt && client.AuthorizedUser is { } name && current.AccountOf(name) != client.Account.Name)
        {
            ClientLog.AccountChangedOnReload(logger, client, client.Account.Name);
            refusal = CloseReason.ClientClosed;
            return null;
        }

        var user = authentication.Reauthenticate(previous, current);
        if (user is null)
        {
            ClientLog.AuthorizationViolation(logger, client);
            refusal = CloseReason.AuthenticationViolation;
            return null;
        }

        refusal = CheckLimitAfterReload(client, logger);
        return refusal == CloseReason.None ? user : null;
    }

    /// <summary>
    /// After a reload authenticated the connection again: when its account's <c>max_connections</c> is now below the
    /// connections it has, this one gives its place back at once (so the next one checked may stay) and is closed as
    /// a connection refused by the account. nats-server registers each connection again and closes those it finds at
    /// or beyond the limit, which leaves one fewer than the limit; we keep as many as the limit allows.
    /// </summary>
    private static CloseReason CheckLimitAfterReload(NatsClient client, ILogger logger)
    {
        var account = client.Account;
        var limit = account.Limits.MaxConnections;
        if (limit < 0 || account.Connections <= limit)
        {
            return CloseReason.None;
        }

        client.ReleaseAccount();
        ClientLog.MaxAccountConnectionsExceeded(logger, client, account.Name);
        return CloseReason.MaxAccountConnectionsExceeded;
    }
}
