using System.Net;
using System.Security.Cryptography;
using System.Text;

namespace Broker.Compare.Load;

/// <summary>The opening handshake (RFC 6455 section 4): the upgrade request and the checks of the 101 answer.</summary>
internal sealed partial class WebSocketClientStream
{
    // The server's answer head must fit here; nats-server's is about 150 bytes.
    private const int MaxResponseHead = 16 * 1024;

    private const string AcceptGuid = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";

    private void Handshake(IPEndPoint address)
    {
        var key = Convert.ToBase64String(RandomNumberGenerator.GetBytes(16));
        var request = $"GET / HTTP/1.1\r\nHost: {address}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + $"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n";
        var bytes = Encoding.ASCII.GetBytes(request).AsSpan();
        while (!bytes.IsEmpty)
        {
            bytes = bytes[socket.Send(bytes)..];
        }

        int headEnd;
        while ((headEnd = received.AsSpan(0, end).IndexOf("\r\n\r\n"u8)) < 0)
        {
            if (end >= MaxResponseHead)
            {
                throw new IOException($"The WebSocket upgrade answer is longer than {MaxResponseHead / 1024} KiB.");
            }

            var count = socket.Receive(received.AsSpan(end, MaxResponseHead - end));
            if (count == 0)
            {
                throw new IOException("The server closed the connection during the WebSocket upgrade.");
            }

            end += count;
        }

        var lines = Encoding.ASCII.GetString(received, 0, headEnd).Split("\r\n");
        if (!lines[0].StartsWith("HTTP/1.1 101", StringComparison.Ordinal))
        {
            throw new IOException($"The WebSocket upgrade was refused: '{lines[0]}'.");
        }

        var accept = lines.Skip(1)
            .Select(line => line.Split(':', 2))
            .FirstOrDefault(parts => parts.Length == 2 && parts[0].Trim().Equals("Sec-WebSocket-Accept", StringComparison.OrdinalIgnoreCase))?[1].Trim();
        if (accept != ExpectedAccept(key))
        {
            throw new IOException($"The WebSocket upgrade answer has Sec-WebSocket-Accept '{accept}', expected '{ExpectedAccept(key)}'.");
        }

        // Frames may have come in the same read as the head (nats-server sends INFO at once).
        start = headEnd + 4;
    }

    /// <summary>The Sec-WebSocket-Accept value a server must answer <paramref name="key"/> with.</summary>
    internal static string ExpectedAccept(string key)
    {
#pragma warning disable CA5350 // RFC 6455 fixes SHA-1 here; it proves the server understood the upgrade, it protects nothing.
        return Convert.ToBase64String(SHA1.HashData(Encoding.ASCII.GetBytes(key + AcceptGuid)));
#pragma warning restore CA5350
    }
}
