using Broker.Core.Internal.Auth;
using Broker.Core.Internal.Logging;
using Broker.Core.Internal.Protocol;

namespace Broker.Core.Internal.Clients;

/// <summary>
/// Operator mode on one connection: what its user JWT gave it (limits, /connz <c>jwt</c>, <c>issuer_key</c>,
/// <c>name_tag</c>) and the expiry of its authentication (nats-server <c>setExpiration</c>: the JWT's <c>exp</c> or the
/// end of its <c>times</c> window closes it with <c>User Authentication Expired</c>; the account's JWT expiring closes
/// it with <c>Account Authentication Expired</c>).
/// </summary>
internal sealed partial class NatsClient
{
    private ITimer? expiryTimer;

    /// <summary>What the user's JWT gave this connection, or null outside operator mode.</summary>
    public JwtUser? JwtUser { get; private set; }

    /// <summary>The connection type a user JWT's <c>allowed_connection_types</c> names: <c>WEBSOCKET</c> on the WebSocket listener.</summary>
    public string JwtConnectionType => transport.Listener is { Name: not BrokerServer.ClientListenerName } ? "WEBSOCKET" : "STANDARD";

    /// <summary>The user JWT's payload limit, -1 when none.</summary>
    private int UserMaxPayload => JwtUser?.MaxPayload ?? -1;

    /// <summary>The user JWT's subscription limit, -1 when none.</summary>
    private int UserMaxSubscriptions => JwtUser?.MaxSubscriptions ?? -1;

    /// <summary>Closes the connection because its account's JWT expired.</summary>
    public void CloseForAccountExpired()
    {
        if (!IsClosed)
        {
            ClientLog.AuthenticationExpired(logger, this, "Account Authentication Expired");
            BeginClose(CloseReason.AuthenticationExpired, ServerMessages.ErrAccountAuthenticationExpired);
        }
    }

    private void TakeJwt(JwtUser? jwt)
    {
        JwtUser = jwt;
        Interlocked.Exchange(ref expiryTimer, null)?.Dispose();
        if (jwt?.ExpiresAt is not { } expiresAt)
        {
            return;
        }

        var due = expiresAt - DateTimeOffset.UtcNow;
        expiryTimer = TimeProvider.System.CreateTimer(
            static state => ((NatsClient)state!).OnUserExpired(),
            this,
            due < TimeSpan.Zero ? TimeSpan.Zero : due,
            Timeout.InfiniteTimeSpan);
    }

    private void OnUserExpired()
    {
        if (!IsClosed)
        {
            ClientLog.AuthenticationExpired(logger, this, "User Authentication Expired");
            BeginClose(CloseReason.AuthenticationExpired, ServerMessages.ErrUserAuthenticationExpired);
        }
    }

    private void StopExpiry() => Interlocked.Exchange(ref expiryTimer, null)?.Dispose();
}
