using System.Net.WebSockets;
using System.Security.Cryptography;
using System.Text;
using Broker.Core.Internal.Clients;

namespace Broker.Core.Internal.Leaf;

/// <summary>
/// A leaf link over WebSocket (nats-server's <c>leafNodeSolicitWSConnection</c>): the HTTP upgrade to the hub's
/// <c>websocket</c> port at path <c>/leafnode</c> (which tells the hub the connection is a leaf node, not a client),
/// the response checked as nats-server checks it, then the framework's RFC 6455 client
/// (<see cref="WebSocket.CreateFromStream(Stream, WebSocketCreationOptions)"/>): frames we send are masked, as a
/// nats-server spoke masks them unless <c>ws_no_masking</c>; with <c>ws_compression</c> permessage-deflate without
/// context takeover is offered, and used when the hub agrees (a hub that wants context takeover is refused).
/// </summary>
/// <remarks>
/// The WebSocket plugin's frame codec is the server's (it requires masked frames and writes unmasked ones) and is not
/// part of the plugin contract; the client's side is the framework's, not a copy of it.
/// </remarks>
internal static class LeafWebSocket
{
    // nats-server's leafNodeWSPath.
    private const string LeafPath = "/leafnode";

    // RFC 6455 section 1.3.
    private const string AcceptGuid = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";

    // nats-server reads the response with a MAX_CONTROL_LINE_SIZE buffer.
    private const int MaxResponse = 4096;

    // nats-server's wsPMCReqHeaderValue.
    private const string Deflate = "permessage-deflate; server_no_context_takeover; client_no_context_takeover";

    /// <summary>Upgrades <paramref name="stream"/> (TCP or TLS) and returns the link's byte stream, which owns it.</summary>
    /// <exception cref="LinkException">The hub refused the upgrade or did not answer in time.</exception>
    public static async Task<Stream> UpgradeAsync(Stream stream, Uri url, bool compress, TimeSpan wait, CancellationToken stopping)
    {
        var key = Convert.ToBase64String(RandomNumberGenerator.GetBytes(16));
        var path = LeafPath + url.AbsolutePath.TrimStart('/');
        var request = $"GET {path} HTTP/1.1\r\nHost: {url.Authority}\r\nConnection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n" +
            "Sec-WebSocket-Version: 13\r\nUpgrade: websocket\r\n" + (compress ? "Sec-WebSocket-Extensions: " + Deflate + "\r\n" : "") + "\r\n";
        using var timeout = CancellationTokenSource.CreateLinkedTokenSource(stopping);
        timeout.CancelAfter(wait);
        string response;
        try
        {
            await stream.WriteAsync(Encoding.ASCII.GetBytes(request), timeout.Token).ConfigureAwait(false);
            await stream.FlushAsync(timeout.Token).ConfigureAwait(false);
            response = await ReadResponseAsync(stream, timeout.Token).ConfigureAwait(false);
        }
        catch (OperationCanceledException) when (!stopping.IsCancellationRequested)
        {
            throw new LinkException(LinkStage.WebSocket, "timeout waiting for the upgrade response");
        }

        if (!Accepted(response, key, out var extensions))
        {
            throw new LinkException(LinkStage.WebSocket, "invalid websocket connection");
        }

        // nats-server's wsPMCExtensionSupport: a hub without compression answers without the extension.
        var deflate = compress && extensions.Contains("permessage-deflate", StringComparison.OrdinalIgnoreCase);
        if (deflate && !(extensions.Contains("server_no_context_takeover", StringComparison.OrdinalIgnoreCase)
            && extensions.Contains("client_no_context_takeover", StringComparison.OrdinalIgnoreCase)))
        {
            throw new LinkException(LinkStage.WebSocket, "compression negotiation error");
        }

        var socket = WebSocket.CreateFromStream(stream, new WebSocketCreationOptions
        {
            IsServer = false,
            KeepAliveInterval = TimeSpan.Zero,
            DangerousDeflateOptions = deflate ? new WebSocketDeflateOptions { ClientContextTakeover = false, ServerContextTakeover = false } : null,
        });
        return WebSocketStream.Create(socket, WebSocketMessageType.Binary, ownsWebSocket: true);
    }

    // Up to the blank line, a byte at a time: the hub's INFO may follow in the same segment and belongs to the frames.
    private static async Task<string> ReadResponseAsync(Stream stream, CancellationToken cancellation)
    {
        var buffer = new byte[MaxResponse];
        var length = 0;
        while (length < 4 || !buffer.AsSpan(length - 4, 4).SequenceEqual("\r\n\r\n"u8))
        {
            if (length == buffer.Length)
            {
                throw new LinkException(LinkStage.WebSocket, "invalid websocket connection: response too long");
            }

            if (await stream.ReadAsync(buffer.AsMemory(length, 1), cancellation).ConfigureAwait(false) == 0)
            {
                throw new LinkException(LinkStage.WebSocket, "EOF");
            }

            length++;
        }

        return Encoding.ASCII.GetString(buffer, 0, length);
    }

    // 101 with Upgrade: websocket, Connection: upgrade and the key's accept value, as nats-server requires.
    private static bool Accepted(string response, string key, out string extensions)
    {
        extensions = string.Empty;
        var lines = response.Split("\r\n", StringSplitOptions.RemoveEmptyEntries);
        var status = lines.Length > 0 ? lines[0].Split(' ', 3) : [];
        if (status.Length < 2 || !status[0].StartsWith("HTTP/1.", StringComparison.Ordinal) || status[1] != "101")
        {
            return false;
        }

        var headers = new Dictionary<string, string>(StringComparer.OrdinalIgnoreCase);
        foreach (var line in lines.Skip(1))
        {
            var colon = line.IndexOf(':', StringComparison.Ordinal);
            if (colon > 0)
            {
                headers.TryAdd(line[..colon].Trim(), line[(colon + 1)..].Trim());
            }
        }

#pragma warning disable CA5350 // RFC 6455 defines the accept key with SHA-1; it is a handshake check, not security.
        extensions = headers.GetValueOrDefault("Sec-WebSocket-Extensions", string.Empty);
        var expected = Convert.ToBase64String(SHA1.HashData(Encoding.ASCII.GetBytes(key + AcceptGuid)));
#pragma warning restore CA5350
        return headers.TryGetValue("Upgrade", out var upgrade) && string.Equals(upgrade, "websocket", StringComparison.OrdinalIgnoreCase)
            && headers.TryGetValue("Connection", out var connection) && string.Equals(connection, "upgrade", StringComparison.OrdinalIgnoreCase)
            && headers.TryGetValue("Sec-WebSocket-Accept", out var accept) && accept == expected;
    }
}
