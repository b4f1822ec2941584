using System.Net;
using System.Net.Security;
using System.Net.Sockets;
using System.Net.WebSockets;
using System.Text;

namespace Broker.TestKit;

/// <summary>The transport a <see cref="StoppedSubscriber"/> speaks: plain TCP, TLS after INFO, or WebSocket (binary frames).</summary>
public enum SubscriberTransport
{
    Tcp,
    Tls,
    WebSocket,
}

/// <summary>
/// A NATS subscriber that subscribes, sees its PONG, then reads nothing more, over a socket whose receive buffer is
/// small (so the server's output fills soon), and that the test can end as a peer does: a reset, or a FIN while it
/// still reads nothing (a half-close). Its socket is its own for every transport (the WebSocket client connects
/// through it), so the reset is the same everywhere.
/// </summary>
public sealed class StoppedSubscriber : IAsyncDisposable
{
    private readonly Socket socket;
    private readonly Stream stream;

    private StoppedSubscriber(Socket socket, Stream stream)
    {
        this.socket = socket;
        this.stream = stream;
    }

    /// <summary>
    /// Connects to <paramref name="endPoint"/> over <paramref name="transport"/>, subscribes to <paramref name="subject"/>
    /// and waits for the PONG after it (TLS: the server must show the test CA's server certificate).
    /// </summary>
    public static async Task<StoppedSubscriber> ConnectAsync(SubscriberTransport transport, IPEndPoint endPoint, string subject, CancellationToken cancellationToken)
    {
        var socket = new Socket(SocketType.Stream, ProtocolType.Tcp) { NoDelay = true, ReceiveBufferSize = 4096 };
        try
        {
            await socket.ConnectAsync(endPoint, cancellationToken).ConfigureAwait(false);
            var port = ((IPEndPoint)socket.LocalEndPoint!).Port;
            var stream = await OpenAsync(transport, socket, endPoint, cancellationToken).ConfigureAwait(false);
            var subscriber = new StoppedSubscriber(socket, stream) { LocalPort = port };
            await stream.WriteAsync(Encoding.ASCII.GetBytes($"CONNECT {{\"verbose\":false,\"pedantic\":false}}\r\nSUB {subject} 1\r\nPING\r\n"), cancellationToken).ConfigureAwait(false);
            await stream.FlushAsync(cancellationToken).ConfigureAwait(false);
            await subscriber.ReadUntilAsync("PONG\r\n", cancellationToken).ConfigureAwait(false);
            return subscriber;
        }
        catch
        {
            socket.Dispose();
            throw;
        }
    }

    /// <summary>The subscriber's own port (the server names the connection by it).</summary>
    public int LocalPort { get; private set; }

    /// <summary>Resets the connection (RST: linger 0), as a peer that went away does.</summary>
    public void Reset()
    {
        socket.LingerState = new LingerOption(true, 0);
        socket.Close();
    }

    /// <summary>Sends FIN and goes on reading nothing: the server sees its input end while its output cannot drain.</summary>
    public void HalfClose() => socket.Shutdown(SocketShutdown.Send);

    public async ValueTask DisposeAsync()
    {
        try
        {
            socket.LingerState = new LingerOption(true, 0);
        }
        catch (Exception ex) when (ex is ObjectDisposedException or SocketException)
        {
        }

        socket.Dispose();
        try
        {
            await stream.DisposeAsync().ConfigureAwait(false);
        }
        catch (Exception ex) when (ex is IOException or ObjectDisposedException or WebSocketException or SocketException)
        {
        }
    }

    private static async Task<Stream> OpenAsync(SubscriberTransport transport, Socket socket, IPEndPoint endPoint, CancellationToken cancellationToken)
    {
        switch (transport)
        {
            case SubscriberTransport.Tcp:
                return new NetworkStream(socket, ownsSocket: false);
            case SubscriberTransport.Tls:
            {
                // INFO comes in clear text, then the handshake (the server's TLS after INFO).
                var plain = new NetworkStream(socket, ownsSocket: false);
                await ReadLineAsync(plain, cancellationToken).ConfigureAwait(false);
                var tls = new SslStream(plain, leaveInnerStreamOpen: false, (_, certificate, _, _) => certificate?.GetCertHashString() == TestCertificates.Shared.Server.GetCertHashString());
                await tls.AuthenticateAsClientAsync(new SslClientAuthenticationOptions { TargetHost = "localhost" }, cancellationToken).ConfigureAwait(false);
                return tls;
            }

            default:
            {
                var handler = new SocketsHttpHandler { ConnectCallback = (_, _) => ValueTask.FromResult<Stream>(new NetworkStream(socket, ownsSocket: false)) };
                var client = new ClientWebSocket();
                await client.ConnectAsync(new Uri($"ws://{endPoint}/"), new HttpMessageInvoker(handler), cancellationToken).ConfigureAwait(false);
                return WebSocketStream.Create(client, WebSocketMessageType.Binary, ownsWebSocket: true);
            }
        }
    }

    private static async Task ReadLineAsync(Stream stream, CancellationToken cancellationToken)
    {
        var one = new byte[1];
        var previous = (byte)0;
        while (true)
        {
            if (await stream.ReadAsync(one, cancellationToken).ConfigureAwait(false) == 0)
            {
                throw new IOException("closed before INFO ended");
            }

            if (previous == '\r' && one[0] == '\n')
            {
                return;
            }

            previous = one[0];
        }
    }

    private async Task ReadUntilAsync(string marker, CancellationToken cancellationToken)
    {
        var seen = new StringBuilder();
        var buffer = new byte[4096];
        while (!seen.ToString().Contains(marker, StringComparison.Ordinal))
        {
            var read = await stream.ReadAsync(buffer, cancellationToken).ConfigureAwait(false);
            if (read == 0)
            {
                throw new IOException($"closed before {marker.Trim()}: {seen}");
            }

            seen.Append(Encoding.ASCII.GetString(buffer, 0, read));
        }
    }
}
