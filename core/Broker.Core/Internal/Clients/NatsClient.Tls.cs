using Broker.Abstractions;
using Broker.Core.Internal.Logging;
using Broker.Core.Internal.Protocol;

namespace Broker.Core.Internal.Clients;

/// <summary>
/// TLS for NATS clients, provided by a TLS middleware through <see cref="ITlsConnectionFeature"/>: INFO goes out in
/// clear text, then the client starts TLS on the same socket (nats-server <c>createClientEx</c>), unless the
/// handshake already happened before INFO (<c>handshake_first</c>).
/// </summary>
internal sealed partial class NatsClient
{
    // nats-server's authentication timeout when TLS is on and none is configured: the TLS timeout plus one second.
    private static readonly TimeSpan TlsAuthTimeoutMargin = TimeSpan.FromSeconds(1);

    /// <summary>How long the client may take to authenticate, counted from the end of the TLS handshake.</summary>
    private TimeSpan AuthTimeout
    {
        get
        {
            var authorization = Server.Options.Authorization;
            return Tls is { } tls && !authorization.IsTimeoutSet ? tls.HandshakeTimeout + TlsAuthTimeoutMargin : authorization.Timeout;
        }
    }

    /// <summary>
    /// Starts TLS after INFO when the listener asks for it. Returns <see langword="false"/> when the connection was
    /// closed instead: a clear-text client on a TLS-only port gets <c>-ERR 'Secure Connection - TLS Required'</c>
    /// (nats-server sends it only when the handshake times out; we also say it when the client speaks clear text),
    /// a failed handshake is closed without writing.
    /// </summary>
    private async Task<bool> StartTlsAsync(CancellationToken cancellationToken)
    {
        if (Tls is not { IsEstablished: false } tls)
        {
            return true;
        }

        var result = await tls.UpgradeAsync(cancellationToken).ConfigureAwait(false);
        switch (result)
        {
            case TlsUpgradeResult.Upgraded:
                AdoptTransport();
                return !IsClosed;
            case TlsUpgradeResult.Plaintext:
                return !IsClosed;
            case TlsUpgradeResult.TlsRequired:
                ClientLog.TlsRequired(logger, this);
                BeginClose(CloseReason.TlsHandshakeError, ServerMessages.ErrSecureConnectionRequired);
                return false;
            default:
                BeginClose(CloseReason.TlsHandshakeError, default);
                return false;
        }
    }

    /// <summary>Switches to the decrypted pipe the TLS middleware put on the connection.</summary>
    private void AdoptTransport()
    {
        var transport = connection.Transport;
        lock (output.Gate)
        {
            input = transport.Input;
            output.Replace(transport.Output);
        }
    }

    /// <summary>
    /// What INFO says about this connection's transport: <c>tls_required</c>, <c>tls_available</c>, <c>tls_verify</c>,
    /// and for a listener other than the client port (WebSocket) its own host and port, as nats-server does.
    /// </summary>
    public void DescribeTransport(ServerInfo info)
    {
        if (Listener is { Name: not BrokerServer.ClientListenerName } listener && LocalEndPoint is System.Net.IPEndPoint local)
        {
            info.Host = listener.EndPoint is System.Net.IPEndPoint bound ? bound.Address.ToString() : info.Host;
            info.Port = local.Port;
        }

        if (Tls is not { } tls)
        {
            return;
        }

        // A session established before INFO (handshake_first, wss) is TLS whatever allow_non_tls says.
        var required = tls.Required || tls.IsEstablished;
        info.TlsRequired = required ? true : null;
        info.TlsAvailable = required ? null : true;
        info.TlsVerify = tls.ClientCertificateRequired ? true : null;
    }
}
