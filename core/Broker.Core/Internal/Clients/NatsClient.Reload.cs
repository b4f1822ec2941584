using Broker.Core.Internal.Auth;
using Broker.Core.Internal.Logging;
using Broker.Core.Internal.Protocol;

namespace Broker.Core.Internal.Clients;

/// <summary>
/// A configuration reload seen by a live connection (nats-server <c>reloadAuthorization</c> and
/// <c>processSubsOnConfigReload</c>): authenticate again (<see cref="ClientAuthentication.Reauthenticate"/>), take the
/// new permissions, and drop subscriptions they no longer allow, with a -ERR for each. The connection stays open unless
/// its user is gone or in another account, its credentials stopped being valid, or a lowered <c>max_connections</c>
/// leaves no place for it. Account limits in force are read per read and per SUB, so they need nothing here.
/// In operator mode, the user JWT, its expiry and live claims updates of the account are <see cref="UserClaims"/>'s;
/// the server reaches them through the members at the end.
/// </summary>
internal sealed partial class NatsClient
{
    /// <summary>Applies a new authenticator to this connection. Called from the reloading thread.</summary>
    public void ApplyReload(Authenticator previous, Authenticator current)
    {
        // -V may have been turned on or off with the reload (the host applies its log level first).
        trace.Refresh();
        if (IsClosed || !authentication.IsAuthenticated)
        {
            // Not yet authenticated: its CONNECT will meet the new configuration.
            return;
        }

        if (callout?.ApplyReload() == true)
        {
            return;
        }

        var user = AccountBinding.Reauthenticate(this, authentication, previous, current, logger, out var refusal);
        if (user is null)
        {
            BeginClose(refusal, AccountBinding.Error(refusal));
            return;
        }

        foreach (var subscription in ApplyToSubscriptions(TakeUser(user)))
        {
            SendPermissionError("Permissions Violation for Subscription to ", subscription.Subject, subscription.Queue, $" (sid {GoQuote.Quote(subscription.Sid)})", flushNow: true);
            ClientLog.SubscriptionRemovedOnReload(logger, this, subscription.SubjectString);
        }
    }

    /// <summary>Closes with <c>-ERR 'maximum connections exceeded'</c>, as nats-server does after a reload lowered the limit.</summary>
    public void CloseForMaxConnections()
    {
        if (IsClosed)
        {
            return;
        }

        ClientLog.MaxConnectionsExceeded(logger, this);
        BeginClose(CloseReason.MaxConnectionsExceeded, ServerMessages.ErrMaxConnections);
    }

    /// <summary>What the user's JWT gave this connection, or null outside operator mode.</summary>
    public JwtUser? JwtUser => claims.User;

    /// <summary>The connection type a user JWT's <c>allowed_connection_types</c> names: <c>WEBSOCKET</c> on the WebSocket listener.</summary>
    public string JwtConnectionType => transport.Listener is { Name: not BrokerServer.ClientListenerName } ? "WEBSOCKET" : "STANDARD";

    /// <summary>nats-server's client type of this connection (events' <c>client_type</c>, callout requests' <c>type</c>): <c>websocket</c> on the WebSocket listener, else <c>nats</c>.</summary>
    public string ClientType => JwtConnectionType == "WEBSOCKET" ? "websocket" : NatsProtocolHandler.ProtocolName;

    /// <summary>Closes the connection because its account's JWT expired.</summary>
    public void CloseForAccountExpired() => claims.CloseForAccountExpired();

    /// <summary>Closes the connection because a claims update lowered its account's connection limit below it.</summary>
    public void CloseForAccountConnections() => claims.CloseForAccountConnections();

    /// <summary>Checks the connection against its account's JWT just taken; closes it when it no longer fits.</summary>
    public void CheckClaimsUpdate() => claims.CheckClaimsUpdate();
}
