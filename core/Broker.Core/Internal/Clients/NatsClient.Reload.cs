using Broker.Core.Internal.Auth;
using Broker.Core.Internal.Logging;
using Broker.Core.Internal.Protocol;

namespace Broker.Core.Internal.Clients;

/// <summary>
/// A configuration reload seen by a live connection (nats-server <c>reloadAuthorization</c> and
/// <c>processSubsOnConfigReload</c>): authenticate again, take the new permissions, and drop subscriptions they no
/// longer allow, with a -ERR for each. The connection stays open unless its credentials stopped being valid, or a
/// lowered <c>max_connections</c> leaves no place for it.
/// </summary>
internal sealed partial class NatsClient
{
    // The credentials of the last CONNECT, kept to authenticate again after a reload.
    private string? connectUser;
    private string? connectPassword;
    private string? connectToken;

    // The NKey the last CONNECT authenticated with, and the nonce this connection's INFO carried for it to sign.
    private string? connectNkey;
    private string? nonce;

    // Authenticated by verify_and_map rather than by CONNECT credentials.
    private bool certificateMapped;

    /// <summary>Applies a new authenticator to this connection. Called from the reloading thread.</summary>
    public void ApplyReload(Authenticator previous, Authenticator current)
    {
        // -V may have been turned on or off with the reload (the host applies its log level first).
        RefreshTracing();
        if (IsClosed || !Volatile.Read(ref authenticated))
        {
            // Not yet authenticated: its CONNECT will meet the new configuration.
            return;
        }

        // A user mapped from the client certificate (verify_and_map) is mapped again under the new users.
        // An NKey user stays while its key is configured: the signature of this connection's nonce was checked.
        var user = certificateMapped && Tls?.ClientCertificate is { } certificate && current.MapsCertificates
            ? current.AuthenticateCertificate(certificate)
            : connectNkey is not null
                ? current.ReauthenticateNkey(connectNkey)
                : current.Reauthenticate(previous, connectUser, connectPassword, connectToken);
        if (user is null)
        {
            AuthorizationViolation();
            return;
        }

        AuthorizedUser = user.Name;
        var permissions = user.Permissions?.CreateForConnection();
        Permissions = permissions;
        foreach (var subscription in ApplyToSubscriptions(permissions))
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

    private void RememberNkey(string? publicKey) => connectNkey = publicKey;

    private void RememberCredentials(string? user, string? password, string? token)
    {
        connectUser = user;
        connectPassword = password;
        connectToken = token;
    }
}
