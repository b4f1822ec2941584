using Broker.Core.Internal.Accounts;
using Broker.Core.Internal.Auth;
using Broker.Core.Internal.Logging;
using Broker.Core.Internal.Protocol;
using Microsoft.Extensions.Logging;

namespace Broker.Core.Internal.Clients;

/// <summary>
/// Operator mode on one connection: what its user JWT gave it (limits, /connz <c>jwt</c>, <c>issuer_key</c>,
/// <c>name_tag</c>), the expiry of its authentication (nats-server <c>setExpiration</c>: the JWT's <c>exp</c> or the
/// end of its <c>times</c> window closes it with <c>User Authentication Expired</c>; the account's JWT expiring closes
/// it with <c>Account Authentication Expired</c>) and a claims update of its account applied live (nats-server
/// <c>updateAccountClaimsWithRefresh</c> walking the account's clients): beyond the new connection limit it is closed
/// as a refused connection; at or beyond the new subscription limit it is told and closed (<c>applyAccountLimits</c> →
/// <c>subsAtLimit</c>); a revoked user JWT closes it with <c>User Authentication Revoked</c>, a bearer JWT the account
/// now refuses as an authorization violation. The payload limit needs nothing here: the read loop reads the account's
/// limits each batch.
/// </summary>
internal sealed class UserClaims(NatsClient client, ILogger logger) : IDisposable
{
    private ITimer? expiryTimer;

    /// <summary>What the user's JWT gave this connection, or null outside operator mode.</summary>
    public JwtUser? User { get; private set; }

    /// <summary>The user JWT's payload limit, -1 when none.</summary>
    public int MaxPayload => User?.MaxPayload ?? -1;

    /// <summary>The user JWT's subscription limit, -1 when none.</summary>
    public int MaxSubscriptions => User?.MaxSubscriptions ?? -1;

    /// <summary>Takes the JWT the connection authenticated with (or none) and starts the timer of its expiry.</summary>
    public void Take(JwtUser? jwt)
    {
        User = jwt;
        Interlocked.Exchange(ref expiryTimer, null)?.Dispose();
        if (jwt?.ExpiresAt is not { } expiresAt)
        {
            return;
        }

        var due = expiresAt - DateTimeOffset.UtcNow;
        expiryTimer = TimeProvider.System.CreateTimer(
            static state => ((UserClaims)state!).OnUserExpired(),
            this,
            due < TimeSpan.Zero ? TimeSpan.Zero : due,
            Timeout.InfiniteTimeSpan);
    }

    /// <summary>Stops the expiry timer.</summary>
    public void Dispose() => Interlocked.Exchange(ref expiryTimer, null)?.Dispose();

    /// <summary>Closes the connection because its account's JWT expired.</summary>
    public void CloseForAccountExpired()
    {
        if (!client.IsClosed)
        {
            ClientLog.AuthenticationExpired(logger, client, "Account Authentication Expired");
            client.BeginClose(CloseReason.AuthenticationExpired, ServerMessages.ErrAccountAuthenticationExpired);
        }
    }

    /// <summary>Closes the connection because a claims update lowered its account's connection limit below it.</summary>
    public void CloseForAccountConnections()
    {
        if (!client.IsClosed)
        {
            ClientLog.MaxAccountConnectionsExceeded(logger, client, client.Account.Name);
            client.BeginClose(CloseReason.MaxAccountConnectionsExceeded, ServerMessages.ErrMaxAccountConnections);
        }
    }

    /// <summary>Checks the connection against its account's JWT just taken; closes it when it no longer fits.</summary>
    public void CheckClaimsUpdate()
    {
        var account = client.Account;
        if (client.IsClosed || account.Jwt is not { } jwt)
        {
            return;
        }

        var maxSubscriptions = ClientLimits.MaxSubscriptions(client.Server.Options, account, MaxSubscriptions);
        if (maxSubscriptions > 0 && client.SubscriptionCount >= maxSubscriptions)
        {
            ClientLog.MaxSubscriptionsExceeded(logger, client);
            client.BeginClose(CloseReason.MaxSubscriptionsExceeded, ServerMessages.ErrMaxSubscriptions);
            return;
        }

        if (User is not { } user)
        {
            return;
        }

        if (user.Claims.Nats.BearerToken && jwt.DisallowBearer)
        {
            ClientLog.AuthorizationViolation(logger, client);
            client.BeginClose(CloseReason.AuthenticationViolation, ServerMessages.ErrAuthorization);
        }
        else if (jwt.IsRevoked(user.Claims.Subject!, user.Claims.IssuedAt))
        {
            ClientLog.AuthenticationExpired(logger, client, "User Authentication Revoked");
            client.BeginClose(CloseReason.Revocation, ServerMessages.ErrUserAuthenticationRevoked);
        }
    }

    private void OnUserExpired()
    {
        if (!client.IsClosed)
        {
            ClientLog.AuthenticationExpired(logger, client, "User Authentication Expired");
            client.BeginClose(CloseReason.AuthenticationExpired, ServerMessages.ErrUserAuthenticationExpired);
        }
    }
}
