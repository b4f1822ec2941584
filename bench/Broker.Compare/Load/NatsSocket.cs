using System.Net;
using System.Net.Sockets;
using System.Text;

namespace Broker.Compare.Load;

/// <summary>
/// One client connection of the load generator: a blocking TCP socket speaking the NATS client protocol by hand.
/// Every blocking call has a timeout, so a server that stops answering fails the run instead of hanging it.
/// </summary>
internal sealed class NatsSocket : IDisposable
{
    /// <summary>How long a send or receive may block before the run is failed.</summary>
    public static readonly TimeSpan IoTimeout = TimeSpan.FromSeconds(15);

    private static readonly byte[] PingLine = "PING\r\n"u8.ToArray();
    private static readonly byte[] PongLine = "PONG\r\n"u8.ToArray();

    [ThreadStatic]
    private static MessageScanner? handshakeScanner;

    [ThreadStatic]
    private static byte[]? handshakeBuffer;

    private NatsSocket(Socket socket, string info)
    {
        Socket = socket;
        Info = info;
    }

    public Socket Socket { get; }

    /// <summary>The server's INFO line (JSON after <c>INFO </c>).</summary>
    public string Info { get; }

    /// <summary>
    /// Connects, reads INFO, sends CONNECT (not verbose, not pedantic, headers on) followed by
    /// <paramref name="setup"/> (SUB lines), then PING, and returns once the PONG confirms the server processed all of it.
    /// </summary>
    public static NatsSocket Open(IPEndPoint endPoint, string name, string setup = "", RunScope? scope = null)
    {
        var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp)
        {
            NoDelay = true,
            SendTimeout = (int)IoTimeout.TotalMilliseconds,
            ReceiveTimeout = (int)IoTimeout.TotalMilliseconds,
        };
        try
        {
            scope?.Track(socket);
            if (!socket.ConnectAsync(endPoint).Wait(IoTimeout))
            {
                throw new TimeoutException($"Connecting to {endPoint} took longer than {IoTimeout.TotalSeconds:0} s.");
            }

            var info = ReadInfo(socket);
            var connect = "CONNECT {\"verbose\":false,\"pedantic\":false,\"headers\":true,\"protocol\":1,\"lang\":\"bench\",\"version\":\"1.0\",\"name\":\""
                + name + "\"}\r\n" + setup;
            var natsSocket = new NatsSocket(socket, info);
            natsSocket.Send(Encoding.ASCII.GetBytes(connect));
            natsSocket.PingPong();
            return natsSocket;
        }
        catch
        {
            socket.Dispose();
            throw;
        }
    }

    /// <summary>Sends all of <paramref name="data"/>.</summary>
    public void Send(ReadOnlySpan<byte> data)
    {
        while (!data.IsEmpty)
        {
            var sent = Socket.Send(data);
            data = data[sent..];
        }
    }

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
            var received = Socket.Receive(buffer);
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
            Socket.LingerState = new LingerOption(true, 0);
        }
        catch (SocketException)
        {
        }

        Socket.Dispose();
    }

    public void Dispose() => Socket.Dispose();

    private static string ReadInfo(Socket socket)
    {
        var buffer = handshakeBuffer ??= new byte[16 * 1024];
        var length = 0;
        while (true)
        {
            var received = socket.Receive(buffer.AsSpan(length));
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
