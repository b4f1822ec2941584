using System.Text;
using Broker.Abstractions;
using Broker.Core.Auth;
using Broker.Core.Internal.Auth;
using Broker.Core.Internal.Logging;
using Broker.Core.Internal.Protocol;
using Microsoft.Extensions.Logging;

namespace Broker.Core.Internal.Clients;

/// <summary>
/// The authentication of one NATS connection (nats-server's <c>checkAuthentication</c>, <c>authTimeout</c> and
/// <c>reloadAuthorization</c> for a client): the nonce its INFO carried, what its CONNECT authenticated with (kept to
/// authenticate again after a reload), whether it is authenticated, and the deadline for it to be. The authenticator
/// is passed to each call, as a reload replaces it; closing is left to the connection.
/// </summary>
internal sealed class ClientAuthentication : IDisposable
{
    // nats-server's authentication timeout when TLS is on and none is configured: the TLS timeout plus one second.
    private static readonly TimeSpan TlsAuthTimeoutMargin = TimeSpan.FromSeconds(1);

    private readonly ITlsConnectionFeature? tls;
    private bool authenticated;
    private Timer? timer;
    private Action? onTimeout;

    // The nonce this connection's INFO carried, for an NKey user to sign.
    private string? nonce;

    // The credentials of the last CONNECT, kept to authenticate again after a reload.
    private string? connectUser;

    /// <summary>The user name the client's CONNECT gave (or its certificate), for the authentication failure event.</summary>
    public string? ConnectUser => connectUser;
    private string? connectPassword;
    private string? connectToken;

    // The NKey the last CONNECT authenticated with.
    private string? connectNkey;

    // Operator mode: the user JWT and nonce signature of the last CONNECT, where it came from and by which listener.
    private string? connectJwt;
    private string? connectSignature;
    private System.Net.IPAddress? connectHost;
    private string connectionType = "STANDARD";

    // Authenticated by verify_and_map rather than by CONNECT credentials.
    private bool certificateMapped;

    /// <param name="required">Whether the broker requires authentication; when not, the connection is authenticated from the start.</param>
    /// <param name="tls">TLS on the connection: a client certificate may name the user, and the handshake lengthens the default deadline.</param>
    public ClientAuthentication(bool required, ITlsConnectionFeature? tls)
    {
        this.tls = tls;
        authenticated = !required;
    }

    /// <summary>The nonce this connection's INFO carried, or null.</summary>
    public string? Nonce => nonce;

    /// <summary>Whether the connection is authenticated (by CONNECT, or bound to <c>no_auth_user</c>, or none is required).</summary>
    public bool IsAuthenticated => Volatile.Read(ref authenticated);

    /// <summary>
    /// The nonce for this connection's INFO, remembered for the NKey signature check: one only when some user needs
    /// it, as nats-server.
    /// </summary>
    public string? CreateNonce(Authenticator authenticator)
    {
        nonce = authenticator.NonceRequired ? Authenticator.CreateNonce() : null;
        return nonce;
    }

    /// <summary>How long the client may take to authenticate, counted from the end of the TLS handshake.</summary>
    public TimeSpan Deadline(AuthorizationOptions authorization) =>
        tls is { } established && !authorization.IsTimeoutSet ? established.HandshakeTimeout + TlsAuthTimeoutMargin : authorization.Timeout;

    /// <summary>
    /// Starts the authentication deadline when the connection is not authenticated yet; <paramref name="expired"/>
    /// runs on a timer thread if it is still not authenticated when the deadline passes.
    /// </summary>
    public void StartDeadline(AuthorizationOptions authorization, Action expired)
    {
        if (IsAuthenticated)
        {
            return;
        }

        onTimeout = expired;
        timer = new Timer(static state => ((ClientAuthentication)state!).OnDeadline(), this, Deadline(authorization), Timeout.InfiniteTimeSpan);
    }

    /// <summary>Stops the deadline for good (the connection ended).</summary>
    public void Dispose() => StopDeadline();

    /// <summary>
    /// <see cref="Authenticate(Authenticator, ConnectMessage, TransportCredentials?, out string?, out bool)"/> with what
    /// it noticed logged for <paramref name="client"/>: a user name the certificate mapping ignored, why an NKey was refused.
    /// </summary>
    public AuthenticatedUser? Authenticate(Authenticator authenticator, ConnectMessage connect, TransportCredentials? fromTransport, NatsClient client, ILogger logger)
    {
        if (authenticator.ChecksJwt)
        {
            connectJwt = connect.Jwt;
            connectSignature = connect.Signature;
            connectHost = client.RemoteEndPoint?.Address;
            connectionType = client.JwtConnectionType;
            var jwtUser = AuthenticateJwt(authenticator, out var jwtFailure);
            if (jwtFailure is not null)
            {
                ClientLog.NkeyRefused(logger, client, jwtFailure);
            }

            return jwtUser;
        }

        var user = Authenticate(authenticator, connect, fromTransport, out var nkeyFailure, out var userIgnored);
        if (userIgnored)
        {
            ClientLog.UserFromCertificate(logger, client, connect.User!);
        }

        if (nkeyFailure is not null)
        {
            ClientLog.NkeyRefused(logger, client, nkeyFailure);
        }

        return user;
    }

    /// <summary>
    /// The user a CONNECT authenticates as. With <c>verify_and_map</c> the client certificate names the user; a CONNECT
    /// naming an NKey (when NKey users exist) proves it with its signature of the INFO nonce; otherwise CONNECT
    /// credentials are used, each empty one filled from the transport's (WebSocket cookies), as nats-server.
    /// </summary>
    /// <param name="authenticator">The broker's current authenticator.</param>
    /// <param name="connect">The CONNECT.</param>
    /// <param name="fromTransport">Credentials the transport found (WebSocket cookies), or null.</param>
    /// <param name="nkeyFailure">Why an NKey was refused, in nats-server's words, for the connection to log.</param>
    /// <param name="userIgnored">Whether the CONNECT named a user the certificate mapping ignored, for the connection to log.</param>
    public AuthenticatedUser? Authenticate(Authenticator authenticator, ConnectMessage connect, TransportCredentials? fromTransport, out string? nkeyFailure, out bool userIgnored)
    {
        nkeyFailure = null;
        userIgnored = false;
        if (tls is { MapClientCertificateToUser: true } mapping && authenticator.MapsCertificates)
        {
            certificateMapped = true;
            var mapped = mapping.ClientCertificate is { } certificate ? authenticator.AuthenticateCertificate(certificate) : null;
            userIgnored = mapped is not null && !string.IsNullOrEmpty(connect.User);
            return mapped;
        }

        if (authenticator.ChecksNkey(connect.Nkey))
        {
            connectNkey = connect.Nkey;
            return authenticator.AuthenticateNkey(connect.Nkey!, connect.Signature, Encoding.ASCII.GetBytes(nonce ?? ""), out nkeyFailure);
        }

        var user = OrElse(connect.User, fromTransport?.User);
        var password = OrElse(connect.Password, fromTransport?.Password);
        var token = OrElse(connect.AuthToken, fromTransport?.Token);
        connectUser = user;
        connectPassword = password;
        connectToken = token;
        return authenticator.Authenticate(user, password, token);

        static string? OrElse(string? value, string? fallback) => string.IsNullOrEmpty(value) ? fallback : value;
    }

    /// <summary>Marks the connection authenticated and stops the deadline.</summary>
    public void Complete()
    {
        Volatile.Write(ref authenticated, true);
        StopDeadline();
    }

    private AuthenticatedUser? AuthenticateJwt(Authenticator authenticator, out string? failure) =>
        authenticator.AuthenticateJwt(connectJwt, connectSignature, Encoding.ASCII.GetBytes(nonce ?? ""), connectHost, connectionType, DateTimeOffset.UtcNow, out failure);

    /// <summary>Stops the deadline without authenticating: nats-server clears it when CONNECT arrives, and an authorization callout then has a timeout of its own.</summary>
    public void StopDeadline() => Interlocked.Exchange(ref timer, null)?.Dispose();

    /// <summary>
    /// The user this connection is under a reloaded configuration, or null when its credentials are no longer valid.
    /// A user mapped from the client certificate (verify_and_map) is mapped again under the new users; an NKey user
    /// stays while its key is configured (the signature of this connection's nonce was checked); CONNECT credentials
    /// are checked again.
    /// </summary>
    public AuthenticatedUser? Reauthenticate(Authenticator previous, Authenticator current) =>
        current.ChecksJwt ? AuthenticateJwt(current, out _)
        : certificateMapped && tls?.ClientCertificate is { } certificate && current.MapsCertificates
            ? current.AuthenticateCertificate(certificate)
            : connectNkey is not null
                ? current.ReauthenticateNkey(connectNkey)
                : current.Reauthenticate(previous, connectUser, connectPassword, connectToken);

    private void OnDeadline()
    {
        if (!IsAuthenticated)
        {
            onTimeout?.Invoke();
        }
    }
}
