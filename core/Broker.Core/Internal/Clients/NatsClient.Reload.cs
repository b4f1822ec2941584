using Broker.Core.Internal.Auth;
using Broker.Core.Internal.Logging;

namespace Broker.Core.Internal.Clients;

/// <summary>
/// A configuration reload seen by a live connection (nats-server <c>reloadAuthorization</c> and
/// <c>processSubsOnConfigReload</c>): authenticate again, take the new permissions, and drop subscriptions they no
/// longer allow, with a -ERR for each. The connection stays open unless its credentials stopped being valid.
/// </summary>
internal sealed partial class NatsClient
{
    // The credentials of the last CONNECT, kept to authenticate again after a reload.
    private string? connectUser;
    private string? connectPassword;
    private string? connectToken;

    // Authenticated by verify_and_map rather than by CONNECT credentials.
    private bool certificateMapped;

    /// <summary>Applies a new authenticator to this connection. Called from the reloading thread.</summary>
    public void ApplyReload(Authenticator previous, Authenticator current)
    {
        if (IsClosed || !Volatile.Read(ref authenticated))
        {
            // Not yet authenticated: its CONNECT will meet the new configuration.
            return;
        }

        // A user mapped from the client certificate (verify_and_map) is mapped again under the new users.
        var user = certificateMapped && Tls?.ClientCertificate is { } certificate && current.MapsCertificates
            ? current.AuthenticateCertificate(certificate)
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

    private void RememberCredentials(string? user, string? password, string? token)
    {
        connectUser = user;
        connectPassword = password;
        connectToken = token;
    }
}
