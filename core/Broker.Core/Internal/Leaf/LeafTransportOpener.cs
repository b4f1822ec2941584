using System.IO.Pipelines;
using System.Net.Sockets;
using System.Text.Json;
using Broker.Abstractions;
using Broker.Core.Internal.Clients;
using Broker.Core.Internal.Transport;

namespace Broker.Core.Internal.Leaf;

/// <summary>
/// Turns a dialled socket into a link's transport, in nats-server's order (<c>createLeafNode</c>,
/// <c>processLeafnodeInfo</c>, <c>leafNodeResumeConnectProcess</c>): for <c>ws://</c> and <c>wss://</c> TLS first when
/// asked (<c>wss</c>, or a <c>tls { }</c> block), then the WebSocket upgrade; otherwise the hub's INFO is read in clear
/// text and, when the remote has a <c>tls { }</c> block or the INFO says <c>tls_required</c>, the client handshake
/// follows. The INFO read here is handed to the link as its first input, so the link processes it as before.
/// </summary>
internal sealed class LeafTransportOpener(LinkTls tls, TransportSettings settings)
{
    /// <summary>How long the hub's first INFO (or the upgrade response) may take.</summary>
    public static readonly TimeSpan FirstInfoTimeout = TimeSpan.FromSeconds(2);

    // An INFO longer than this is left to the link, which refuses it.
    private const int MaxInfo = 64 * 1024;

    /// <summary>Opens the link's transport over <paramref name="socket"/>, started, which then owns the socket.</summary>
    /// <exception cref="LinkException">TLS, the upgrade or the INFO failed; the message says why.</exception>
    public async Task<LeafTransport> OpenAsync(Socket socket, Uri url, bool compress, CancellationToken stopping)
    {
        var local = socket.LocalEndPoint;
        var remote = socket.RemoteEndPoint;
        if (url.Scheme is "ws" or "wss")
        {
            Stream stream = new NetworkStream(socket, ownsSocket: true);
            var secure = url.Scheme == "wss" || tls.Configured;
            if (secure)
            {
                stream = await tls.AuthenticateAsync(stream, url, stopping).ConfigureAwait(false);
            }

            var frames = await LeafWebSocket.UpgradeAsync(stream, url, compress, FirstInfoTimeout, stopping).ConfigureAwait(false);
            var connection = new LeafStreamConnection(frames, settings, local, remote, []);
            connection.Start();
            return new LeafTransport(connection, secure, WebSocket: true);
        }

        var (preface, info) = await ReadInfoAsync(new NetworkStream(socket, ownsSocket: false), stopping).ConfigureAwait(false);

        // A leaf port's INFO (anything else is refused by the link as another kind of port).
        if (info is { ClientId: not 0, LeafNodeUrls: not null } && (tls.Configured || info.TlsRequired))
        {
            var ssl = await tls.AuthenticateAsync(new NetworkStream(socket, ownsSocket: true), url, stopping).ConfigureAwait(false);
            var connection = new LeafStreamConnection(ssl, settings, local, remote, preface);
            connection.Start();
            return new LeafTransport(connection, Tls: true, WebSocket: false);
        }

        var plain = new SocketConnection(socket, settings, owner: null, PipeScheduler.ThreadPool);
        plain.Preload(preface);
        plain.Start();
        return new LeafTransport(plain, Tls: false, WebSocket: false);
    }

    // Reads up to the end of the first line; the INFO when it is one.
    private static async Task<(byte[] Preface, LeafInfo? Info)> ReadInfoAsync(NetworkStream stream, CancellationToken stopping)
    {
        using var timeout = CancellationTokenSource.CreateLinkedTokenSource(stopping);
        timeout.CancelAfter(FirstInfoTimeout);
        var buffer = new byte[4096];
        var length = 0;
        int end;
        while ((end = buffer.AsSpan(0, length).IndexOf("\r\n"u8)) < 0 && length < MaxInfo)
        {
            if (length == buffer.Length)
            {
                Array.Resize(ref buffer, buffer.Length * 2);
            }

            int read;
            try
            {
                read = await stream.ReadAsync(buffer.AsMemory(length), timeout.Token).ConfigureAwait(false);
            }
            catch (OperationCanceledException) when (!stopping.IsCancellationRequested)
            {
                throw new LinkException(LinkStage.Info, "Timeout waiting for the hub's INFO");
            }

            if (read == 0)
            {
                throw new LinkException(LinkStage.Info, "EOF before the hub's INFO");
            }

            length += read;
        }

        var preface = buffer[..length];
        var line = end < 0 ? [] : preface.AsSpan(0, end);
        if (!line.StartsWith("INFO "u8))
        {
            return (preface, null);
        }

        try
        {
            return (preface, JsonSerializer.Deserialize(line[5..], LeafJsonContext.Default.LeafInfo));
        }
        catch (JsonException)
        {
            return (preface, null);
        }
    }
}

/// <summary>A link's started transport: whether it is TLS and whether WebSocket frames carry it.</summary>
internal readonly record struct LeafTransport(TransportConnection Connection, bool Tls, bool WebSocket);
