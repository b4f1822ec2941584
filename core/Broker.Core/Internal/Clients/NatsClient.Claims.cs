using Broker.Core.Internal.Accounts;
using Broker.Core.Internal.Logging;
using Broker.Core.Internal.Protocol;

namespace Broker.Core.Internal.Clients;

/// <summary>
/// A claims update of the connection's account, applied live (nats-server <c>updateAccountClaimsWithRefresh</c> walking
/// the account's clients): beyond the new connection limit it is closed as a refused connection; at or beyond the new
/// subscription limit it is told and closed (<c>applyAccountLimits</c> → <c>subsAtLimit</c>); a revoked user JWT
/// closes it with <c>User Authentication Revoked</c>, a bearer JWT the account now refuses as an authorization
/// violation. The payload limit needs nothing here: the read loop reads the account's limits each batch.
/// </summary>
internal sealed partial class NatsClient
{
    /// <summary>Closes the connection because a claims update lowered its account's connection limit below it.</summary>
    public void CloseForAccountConnections()
    {
        if (!IsClosed)
        {
            ClientLog.MaxAccountConnectionsExceeded(logger, this, Account.Name);
            BeginClose(CloseReason.MaxAccountConnectionsExceeded, ServerMessages.ErrMaxAccountConnections);
        }
    }

    /// <summary>Checks the connection against its account's JWT just taken; closes it when it no longer fits.</summary>
    public void CheckClaimsUpdate()
    {
        if (IsClosed || Account.Jwt is not { } jwt)
        {
            return;
        }

        var maxSubscriptions = ClientLimits.MaxSubscriptions(Server.Options, Account, UserMaxSubscriptions);
        if (maxSubscriptions > 0 && SubscriptionCount >= maxSubscriptions)
        {
            ClientLog.MaxSubscriptionsExceeded(logger, this);
            BeginClose(CloseReason.MaxSubscriptionsExceeded, ServerMessages.ErrMaxSubscriptions);
            return;
        }

        if (JwtUser is not { } user)
        {
            return;
        }

        if (user.Claims.Nats.BearerToken && jwt.DisallowBearer)
        {
            ClientLog.AuthorizationViolation(logger, this);
            BeginClose(CloseReason.AuthenticationViolation, ServerMessages.ErrAuthorization);
        }
        else if (jwt.IsRevoked(user.Claims.Subject!, user.Claims.IssuedAt))
        {
            ClientLog.AuthenticationExpired(logger, this, "User Authentication Revoked");
            BeginClose(CloseReason.Revocation, ServerMessages.ErrUserAuthenticationRevoked);
        }
    }
}
