using System.IO.Pipelines;
using System.Net;
using Broker.Abstractions;
using Broker.Core.Internal.Protocol;

namespace Broker.Core.Internal.Clients;

/// <summary>
/// The transport under one NATS connection: its input pipe, the listener and endpoints it came by, and TLS, provided
/// by a TLS middleware through <see cref="ITlsConnectionFeature"/>. INFO goes out in clear text, then the client starts
/// TLS on the same socket (nats-server <c>createClientEx</c>), unless the handshake already happened before INFO
/// (<c>handshake_first</c>); after an upgrade both pipes are the decrypted ones the middleware put on the connection.
/// </summary>
internal sealed class ClientTransport
{
    private readonly TransportConnection connection;
    private readonly ConnectionOutput output;

    /// <param name="connection">The accepted connection.</param>
    /// <param name="output">The connection's output, whose writer is replaced (under its lock) when TLS starts.</param>
    public ClientTransport(TransportConnection connection, ConnectionOutput output)
    {
        this.connection = connection;
        this.output = output;
        Input = connection.Transport.Input;
        RemoteEndPoint = connection.RemoteEndPoint as IPEndPoint;
        Listener = connection.Features.Get<ListenerDefinition>();
        Tls = connection.Features.Get<ITlsConnectionFeature>();
    }

    /// <summary>The pipe the read loop reads; replaced once, when TLS starts after INFO.</summary>
    public PipeReader Input { get; private set; }

    public IPEndPoint? RemoteEndPoint { get; }

    /// <summary>The listener the connection was accepted on, when the broker's listener host set it.</summary>
    public ListenerDefinition? Listener { get; }

    /// <summary>TLS on this connection (established, or to be started after INFO), or <see langword="null"/>.</summary>
    public ITlsConnectionFeature? Tls { get; }

    /// <summary>The local endpoint the client connected to.</summary>
    public EndPoint? LocalEndPoint => connection.LocalEndPoint;

    /// <summary>Bytes queued for the client and not yet sent, when the transport can tell; otherwise 0.</summary>
    public long PendingBytes => connection.Features.Get<IPendingOutputFeature>()?.PendingOutputBytes ?? 0;

    /// <summary>Why the transport closed the connection itself (for example its write deadline), or null.</summary>
    public string? CloseReason => connection.CloseReason;

    /// <summary>Credentials the transport found (WebSocket cookies), or null.</summary>
    public TransportCredentials? Credentials => connection.Features.Get<TransportCredentials>();

    /// <summary>Aborts the connection at once, without sending what is buffered.</summary>
    public void Abort(string reason) => connection.Abort(reason);

    /// <summary>
    /// Starts TLS after INFO when the listener asks for it and it is not up yet; <see cref="TlsUpgradeResult.Upgraded"/>
    /// when there is nothing to start. After an upgrade the connection reads and writes the decrypted pipes.
    /// </summary>
    public async ValueTask<TlsUpgradeResult> StartTlsAsync(CancellationToken cancellationToken)
    {
        if (Tls is not { IsEstablished: false } tls)
        {
            return TlsUpgradeResult.Upgraded;
        }

        var result = await tls.UpgradeAsync(cancellationToken).ConfigureAwait(false);
        if (result == TlsUpgradeResult.Upgraded)
        {
            var transport = connection.Transport;
            lock (output.Gate)
            {
                Input = transport.Input;
                output.Replace(transport.Output);
            }
        }

        return result;
    }

    /// <summary>
    /// What INFO says about this transport: <c>tls_required</c>, <c>tls_available</c>, <c>tls_verify</c>, and for a
    /// listener other than the client port (WebSocket) its own host and port, as nats-server does.
    /// </summary>
    public void Describe(ServerInfo info)
    {
        if (Listener is { Name: not BrokerServer.ClientListenerName } listener && LocalEndPoint is IPEndPoint local)
        {
            info.Host = listener.EndPoint is IPEndPoint bound ? bound.Address.ToString() : info.Host;
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
