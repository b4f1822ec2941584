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
}
