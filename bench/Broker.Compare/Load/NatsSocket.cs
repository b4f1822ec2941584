using System.Net.Sockets;
using System.Text;

namespace Broker.Compare.Load;

/// <summary>
/// One client connection of the load generator: a blocking TCP socket speaking the NATS client protocol by hand,
/// directly or through TLS or WebSocket framing (<see cref="NatsTransport"/>). Every blocking call has a timeout,
/// so a server that stops answering fails the run instead of hanging it.
/// </summary>
internal sealed partial class NatsSocket : IDisposable
{
    /// <summary>How long a send or receive may block before the run is failed.</summary>
    public static readonly TimeSpan IoTimeout = TimeSpan.FromSeconds(15);

    private static readonly byte[] PingLine = "PING\r\n"u8.ToArray();
    private static readonly byte[] PongLine = "PONG\r\n"u8.ToArray();

    [ThreadStatic]
    private static MessageScanner? handshakeScanner;

    [ThreadStatic]
    private static byte[]? handshakeBuffer;

    private readonly Socket socket;

    // TLS or WebSocket framing over the socket; null for bare TCP, which calls the socket directly so the plain
    // rows pay nothing for the other transports.
    private Stream? stream;

    private NatsSocket(Socket socket) => this.socket = socket;

    /// <summary>The TCP socket under any TLS or WebSocket framing.</summary>
    public Socket Socket => socket;

    /// <summary>The server's INFO line (JSON after <c>INFO </c>).</summary>
    public string Info { get; private set; } = string.Empty;

    /// <summary>
    /// Connects, reads INFO (upgrading to TLS when the endpoint asks for it), sends CONNECT (not verbose, not
    /// pedantic, headers on, no-responders statuses when asked) followed by <paramref name="setup"/> (SUB lines), then PING, and returns once the PONG
    /// confirms the server processed all of it. A <paramref name="receiveBufferSize"/> above 0 caps the kernel's
    /// receive buffer before connecting (a subscriber that stops reading then holds little in the kernel). A
    /// <paramref name="user"/> authenticates with its name as password (rows whose configuration has accounts).
    /// </summary>
    public static NatsSocket Open(NatsEndpoint endPoint, string name, string setup = "", RunScope? scope = null, bool noResponders = false, int receiveBufferSize = 0, string? user = null)
    {
        ArgumentNullException.ThrowIfNull(endPoint);
        var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp)
        {
            NoDelay = true,
            SendTimeout = (int)IoTimeout.TotalMilliseconds,
            ReceiveTimeout = (int)IoTimeout.TotalMilliseconds,
        };
        if (receiveBufferSize > 0)
        {
            socket.ReceiveBufferSize = receiveBufferSize;
        }
        var natsSocket = new NatsSocket(socket);
        try
        {
            scope?.Track(socket);
            if (!socket.ConnectAsync(endPoint.Address).Wait(IoTimeout))
            {
                throw new TimeoutException($"Connecting to {endPoint} took longer than {IoTimeout.TotalSeconds:0} s.");
            }

            if (endPoint.Transport == NatsTransport.WebSocket)
            {
                natsSocket.stream = WebSocketClientStream.Connect(socket, endPoint.Address);
            }

            natsSocket.Info = natsSocket.ReadInfo();
            natsSocket.StartTlsIfRequired(endPoint);
            var connect = "CONNECT {\"verbose\":false,\"pedantic\":false,\"headers\":true,"
                + (noResponders ? "\"no_responders\":true," : string.Empty)
                + (user is null ? string.Empty : "\"user\":\"" + user + "\",\"pass\":\"" + user + "\",")
                + "\"protocol\":1,\"lang\":\"bench\",\"version\":\"1.0\",\"name\":\""
                + name + "\"}\r\n" + setup;
            natsSocket.Send(Encoding.ASCII.GetBytes(connect));
            natsSocket.PingPong();
            return natsSocket;
        }
        catch
        {
            natsSocket.Dispose();
            throw;
        }
    }

    /// <summary>Sends all of <paramref name="data"/> (for WebSocket: as one binary frame).</summary>
    public void Send(ReadOnlySpan<byte> data)
    {
        if (stream is not null)
        {
            stream.Write(data);
            return;
        }

        while (!data.IsEmpty)
        {
            var sent = socket.Send(data);
            data = data[sent..];
        }
    }

    /// <summary>
    /// Blocks until NATS bytes arrive and copies up to <paramref name="buffer"/>'s length of them into it;
    /// returns how many, 0 when the server closed the connection.
    /// </summary>
    public int Receive(Span<byte> buffer) => stream is null ? socket.Receive(buffer) : stream.Read(buffer);

    public void SendPong() => Send(PongLine);

    /// <summary>Sends PING and reads until the PONG; anything else but +OK, INFO and server PINGs fails.</summary>
    public void PingPong()
    {
        Send(PingLine);
        var scanner = handshakeScanner ??= new MessageScanner();
        var buffer = handshakeBuffer ??= new byte[16 * 1024];
        scanner.Reset();
        var handler = new PongHandler(this);
        while (!handler.Ponged)
        {
            var received = Receive(buffer);
            if (received == 0)
            {
                throw new IOException("The server closed the connection before answering PING.");
            }

            scanner.Feed(buffer.AsSpan(0, received), ref handler);
        }
    }

    /// <summary>Closes at once with a reset, so idle-connection runs leave no TIME_WAIT sockets behind.</summary>
    public void Abort()
    {
        try
        {
            socket.LingerState = new LingerOption(true, 0);
        }
        catch (SocketException)
        {
        }

        Dispose();
    }

    public void Dispose()
    {
        // Closing the socket first fails any read blocked in the stream at once.
        socket.Dispose();
        stream?.Dispose();
    }

    private string ReadInfo()
    {
        var buffer = handshakeBuffer ??= new byte[16 * 1024];
        var length = 0;
        while (true)
        {
            var received = Receive(buffer.AsSpan(length));
            if (received == 0)
            {
                throw new IOException("The server closed the connection before sending INFO.");
            }

            length += received;
            var newline = buffer.AsSpan(0, length).IndexOf((byte)'\n');
            if (newline >= 0)
            {
                var line = Encoding.ASCII.GetString(buffer, 0, newline).TrimEnd('\r');
                if (!line.StartsWith("INFO ", StringComparison.Ordinal))
                {
                    throw new InvalidOperationException($"Expected INFO, got '{line}'.");
                }

                // The server waits for CONNECT, so nothing follows INFO yet.
                return line[5..];
            }

            if (length == buffer.Length)
            {
                throw new InvalidOperationException("INFO is longer than 16 KiB.");
            }
        }
    }

    private struct PongHandler(NatsSocket socket) : IScanHandler
    {
        public bool Ponged;

        public readonly bool WantsPayload => false;

        public readonly void OnMessage(ReadOnlySpan<byte> replyTo, int size, ReadOnlySpan<byte> payload)
            => throw new InvalidOperationException("A message arrived before the connection was set up.");

        public readonly void OnPing() => socket.SendPong();

        public void OnPong() => Ponged = true;
    }
}
