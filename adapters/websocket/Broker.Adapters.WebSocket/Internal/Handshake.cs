using System.Security.Cryptography;
using System.Text;

namespace Broker.Adapters.WebSocket.Internal;

/// <summary>
/// The server side of the RFC 6455 opening handshake, checked in nats-server's order (<c>wsUpgrade</c>): method,
/// Host, Upgrade, Connection, Sec-WebSocket-Key, Sec-WebSocket-Version, then Origin; errors are answered the way
/// Go's <c>http.Error</c> does, with the <c>Sec-Websocket-Version: 13</c> header.
/// </summary>
internal sealed class Handshake
{
    private const string Guid = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";
    private const string DeflateExtension = "permessage-deflate";

    private readonly WebSocketOptions options;
    private readonly OriginPolicy origins;

    public Handshake(WebSocketOptions options)
    {
        this.options = options;
        origins = new OriginPolicy(options.SameOrigin, options.AllowedOrigins);
    }

    /// <summary>Checks a request; returns <see langword="null"/> when it may upgrade, else the status and the reason (for the log).</summary>
    public (int Status, string Reason)? Check(UpgradeRequest request, bool secure)
    {
        if (request.Method != "GET")
        {
            return (405, "request method must be GET");
        }

        if (string.IsNullOrEmpty(request["Host"]))
        {
            return (400, "'Host' missing in request");
        }

        if (!request.HasToken("Upgrade", "websocket"))
        {
            return (400, "invalid value for header 'Upgrade'");
        }

        if (!request.HasToken("Connection", "Upgrade"))
        {
            return (400, "invalid value for header 'Connection'");
        }

        var key = request["Sec-WebSocket-Key"];
        if (string.IsNullOrEmpty(key))
        {
            return (400, "key missing");
        }

        if (!IsValidKey(key))
        {
            return (400, "invalid websocket key");
        }

        if (!request.HasToken("Sec-WebSocket-Version", "13"))
        {
            return (400, "invalid version");
        }

        return origins.Check(request, secure) is { } refusal ? (403, "origin not allowed: " + refusal) : null;
    }

    /// <summary>Whether the client offered permessage-deflate and the listener allows it.</summary>
    public bool NegotiatesCompression(UpgradeRequest request)
        => options.Compression && request.Values("Sec-WebSocket-Extensions")
            .SelectMany(v => v.Split(','))
            .Any(e => e.Split(';')[0].Trim(' ', '\t').Equals(DeflateExtension, StringComparison.OrdinalIgnoreCase));

    /// <summary>The 101 response.</summary>
    public byte[] Accept(UpgradeRequest request, bool compression)
    {
        var response = new StringBuilder("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ");
        response.Append(AcceptKey(request["Sec-WebSocket-Key"]!)).Append("\r\n");
        if (compression)
        {
            // No context takeover either way, as nats-server: each message is compressed on its own.
            response.Append("Sec-WebSocket-Extensions: permessage-deflate; server_no_context_takeover; client_no_context_takeover\r\n");
        }

        foreach (var (name, value) in options.Headers)
        {
            response.Append(name).Append(": ").Append(value).Append("\r\n");
        }

        return Encoding.Latin1.GetBytes(response.Append("\r\n").ToString());
    }

    /// <summary>An error response as Go's <c>http.Error</c> writes it, plus nats-server's version header.</summary>
    public static byte[] Error(int status)
    {
        var text = status switch
        {
            400 => "Bad Request",
            403 => "Forbidden",
            404 => "Not Found",
            405 => "Method Not Allowed",
            431 => "Request Header Fields Too Large",
            _ => "Internal Server Error",
        };
        var body = text + "\n";
        return Encoding.Latin1.GetBytes(
            $"HTTP/1.1 {status} {text}\r\nContent-Type: text/plain; charset=utf-8\r\nSec-Websocket-Version: 13\r\n"
            + $"X-Content-Type-Options: nosniff\r\nContent-Length: {body.Length}\r\nConnection: close\r\n\r\n{body}");
    }

#pragma warning disable CA5350 // RFC 6455 defines the accept key with SHA-1; it is a handshake check, not security.
    public static string AcceptKey(string key) => Convert.ToBase64String(SHA1.HashData(Encoding.ASCII.GetBytes(key + Guid)));
#pragma warning restore CA5350

    private static bool IsValidKey(string key)
    {
        Span<byte> decoded = stackalloc byte[24];
        return Convert.TryFromBase64String(key, decoded, out var written) && written == 16;
    }
}

/// <summary>
/// nats-server's origin check: with neither <c>same_origin</c> nor <c>allowed_origins</c> any origin passes, and a
/// request without an Origin header always passes (non-browser clients can send anything anyway).
/// </summary>
internal sealed class OriginPolicy
{
    private readonly bool sameOrigin;
    private readonly List<(string Scheme, string Host, int Port)> allowed;

    public OriginPolicy(bool sameOrigin, IEnumerable<string> allowedOrigins)
    {
        this.sameOrigin = sameOrigin;
        allowed = [.. allowedOrigins.Select(o => new Uri(o)).Select(u => (u.Scheme, u.Host.ToLowerInvariant(), u.Port))];
    }

    /// <summary>Returns why the origin is refused, or <see langword="null"/>.</summary>
    public string? Check(UpgradeRequest request, bool secure)
    {
        if (!sameOrigin && allowed.Count == 0)
        {
            return null;
        }

        var origin = request["Origin"] ?? request["Sec-WebSocket-Origin"];
        if (string.IsNullOrEmpty(origin))
        {
            return null;
        }

        if (!Uri.TryCreate(origin, UriKind.Absolute, out var uri) || uri.Host.Length == 0)
        {
            return "invalid origin " + origin;
        }

        var host = uri.Host.ToLowerInvariant();
        if (sameOrigin)
        {
            var scheme = secure ? "https" : "http";
            if (!Uri.TryCreate(scheme + "://" + request["Host"], UriKind.Absolute, out var own)
                || !own.Host.Equals(host, StringComparison.OrdinalIgnoreCase) || own.Port != uri.Port || !uri.Scheme.Equals(scheme, StringComparison.OrdinalIgnoreCase))
            {
                return "not same origin";
            }
        }

        if (allowed.Count > 0 && !allowed.Any(a => a.Host == host && a.Scheme == uri.Scheme && a.Port == uri.Port))
        {
            return "not in the allowed list";
        }

        return null;
    }
}
