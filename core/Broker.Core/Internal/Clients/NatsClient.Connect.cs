using Broker.Core.Internal.Auth;
using Broker.Core.Internal.Logging;
using Broker.Core.Internal.Protocol;

namespace Broker.Core.Internal.Clients;

/// <summary>INFO out and CONNECT in: options applied over nats-server's defaults, then authentication.</summary>
internal sealed partial class NatsClient
{
    private void SendInfo()
    {
        // NKey users sign this connection's nonce; nats-server sends one only when some user needs it.
        var nonce = Server.Authenticator.NonceRequired ? Authenticator.CreateNonce() : null;
        this.nonce = nonce;
        var info = Server.CreateClientInfo(this, nonce: nonce);
        SendProtocol(info, flushNow: true);
    }

    private bool ProcessConnect(ReadOnlySpan<byte> json)
    {
        var connect = ConnectMessage.TryParse(json);
        if (connect is null)
        {
            // nats-server closes on a CONNECT it cannot unmarshal, without -ERR.
            ClientLog.BadConnect(logger, this);
            BeginClose(CloseReason.ParseError, default);
            return false;
        }

        RestartPingTimerAfterConnect();
        verbose = connect.Verbose ?? verbose;
        pedantic = connect.Pedantic ?? pedantic;
        Echo = connect.Echo ?? Echo;
        SupportsHeaders = !Server.Options.NoHeaderSupport && (connect.Headers ?? SupportsHeaders);
        NoResponders = connect.NoResponders ?? NoResponders;
        protocol = connect.Protocol ?? protocol;
        Name = connect.Name ?? Name;
        Lang = connect.Lang ?? Lang;
        ClientVersion = connect.Version ?? ClientVersion;

        // Authentication comes first, as in nats-server; obsolete account fields are a violation.
        var user = Authenticate(connect);
        if (user is null || connect.Account is not null || connect.NewAccount == true)
        {
            AuthorizationViolation();
            return false;
        }

        CompleteAuthentication(user);
        if (protocol is < 0 or > 1)
        {
            BeginClose(CloseReason.BadClientProtocol, ServerMessages.ErrInvalidClientProtocol);
            return false;
        }

        if (NoResponders && !SupportsHeaders)
        {
            BeginClose(CloseReason.NoRespondersRequiresHeaders, ServerMessages.ErrNoRespondersRequiresHeaders);
            return false;
        }

        if (verbose)
        {
            SendProtocol(ServerMessages.Ok);
        }

        return true;
    }

    /// <summary>
    /// The user a CONNECT authenticates as. With <c>verify_and_map</c> the client certificate names the user; a CONNECT
    /// naming an NKey (when NKey users exist) proves it with its signature of the INFO nonce; otherwise CONNECT
    /// credentials are used, each empty one filled from the transport's (WebSocket cookies), as nats-server.
    /// </summary>
    private AuthenticatedUser? Authenticate(ConnectMessage connect)
    {
        var authenticator = Server.Authenticator;
        if (Tls is { MapClientCertificateToUser: true } tls && authenticator.MapsCertificates)
        {
            certificateMapped = true;
            var mapped = tls.ClientCertificate is { } certificate ? authenticator.AuthenticateCertificate(certificate) : null;
            if (mapped is not null && !string.IsNullOrEmpty(connect.User))
            {
                ClientLog.UserFromCertificate(logger, this, connect.User);
            }

            return mapped;
        }

        if (authenticator.ChecksNkey(connect.Nkey))
        {
            RememberNkey(connect.Nkey);
            var nkeyUser = authenticator.AuthenticateNkey(connect.Nkey!, connect.Signature, System.Text.Encoding.ASCII.GetBytes(nonce ?? ""), out var failure);
            if (failure is not null)
            {
                ClientLog.NkeyRefused(logger, this, failure);
            }

            return nkeyUser;
        }

        var fromTransport = connection.Features.Get<Broker.Abstractions.TransportCredentials>();
        var user = OrElse(connect.User, fromTransport?.User);
        var password = OrElse(connect.Password, fromTransport?.Password);
        var token = OrElse(connect.AuthToken, fromTransport?.Token);
        RememberCredentials(user, password, token);
        return authenticator.Authenticate(user, password, token);

        static string? OrElse(string? value, string? fallback) => string.IsNullOrEmpty(value) ? fallback : value;
    }

    private void CompleteAuthentication(AuthenticatedUser user)
    {
        authenticated = true;
        StopAuthTimer();
        AuthorizedUser = user.Name;
        Permissions = user.Permissions?.CreateForConnection();
    }

    private void AuthorizationViolation()
    {
        ClientLog.AuthorizationViolation(logger, this);
        BeginClose(CloseReason.AuthenticationViolation, ServerMessages.ErrAuthorization);
    }
}
