using System.Globalization;
using Microsoft.Extensions.Configuration;

namespace Broker.Adapters.WebSocket.Internal;

/// <summary>
/// Reads <see cref="WebSocketOptions"/> from <c>Plugins:WebSocket</c> with nats-server's key names and checks them
/// as nats-server's <c>validateWebsocketOptions</c> does; every error names the key.
/// </summary>
internal static class WebSocketSettings
{
    private static readonly HashSet<string> OriginKeys = new(StringComparer.OrdinalIgnoreCase)
    {
        "allowed_origins", "allowed_origin", "allow_origins", "allow_origin", "origins", "origin",
    };

    private static readonly HashSet<string> Keys = new(StringComparer.OrdinalIgnoreCase)
    {
        "listen", "port", "host", "net", "advertise", "no_tls", "tls", "same_origin", "handshake_timeout", "compress",
        "compression", "jwt_cookie", "user_cookie", "pass_cookie", "token_cookie", "headers", "max_message_size",
    };

    // Headers the upgrade response sets itself (nats-server refuses these in 'headers').
    private static readonly HashSet<string> ReservedHeaders = new(StringComparer.OrdinalIgnoreCase)
    {
        "host", "content-length", "connection", "upgrade", "nats-no-masking",
    };

    /// <exception cref="InvalidOperationException">A key is unknown or unsupported, or a value is invalid.</exception>
    public static WebSocketOptions Read(IConfiguration section, string path)
    {
        foreach (var child in section.GetChildren())
        {
            if (child.Key.Equals("authorization", StringComparison.OrdinalIgnoreCase)
                || child.Key.Equals("authentication", StringComparison.OrdinalIgnoreCase)
                || child.Key.Equals("no_auth_user", StringComparison.OrdinalIgnoreCase))
            {
                throw new InvalidOperationException($"{path}: '{child.Key}' for WebSocket clients is not supported yet; configure authorization for all clients instead");
            }

            if (!Keys.Contains(child.Key) && !OriginKeys.Contains(child.Key))
            {
                throw new InvalidOperationException($"{path}: unknown field \"{child.Key}\"");
            }
        }

        var options = new WebSocketOptions
        {
            NoTls = ReadBool(section, "no_tls", path),
            SameOrigin = ReadBool(section, "same_origin", path),
            Compression = ReadBool(section, "compression", path) || ReadBool(section, "compress", path),
            JwtCookie = Empty(section["jwt_cookie"]),
            UserCookie = Empty(section["user_cookie"]),
            PassCookie = Empty(section["pass_cookie"]),
            TokenCookie = Empty(section["token_cookie"]),
        };

        ReadEndPoint(section, options, path);
        foreach (var key in OriginKeys)
        {
            foreach (var origin in ReadList(section, key))
            {
                options.AllowedOrigins.Add(origin);
            }
        }

        if (section["handshake_timeout"] is { } timeout)
        {
            options.HandshakeTimeout = ParseDuration(timeout)
                ?? throw new InvalidOperationException($"{path}: error parsing handshake timeout \"{timeout}\"");
        }

        if (section["max_message_size"] is { } max)
        {
            options.MaxMessageSize = long.TryParse(max, NumberStyles.Integer, CultureInfo.InvariantCulture, out var bytes) && bytes > 0
                ? bytes
                : throw new InvalidOperationException($"{path}: max_message_size must be a positive number of bytes");
        }

        foreach (var header in section.GetSection("headers").GetChildren())
        {
            options.Headers[header.Key] = header.Value ?? "";
        }

        Validate(options, section, path);
        return options;
    }

    private static void ReadEndPoint(IConfiguration section, WebSocketOptions options, string path)
    {
        if (section["listen"] is { } listen)
        {
            var colon = listen.LastIndexOf(':');
            if (colon < 0 || !int.TryParse(listen[(colon + 1)..], NumberStyles.Integer, CultureInfo.InvariantCulture, out var listenPort))
            {
                throw new InvalidOperationException($"{path}: could not parse listen address \"{listen}\"");
            }

            options.Host = colon == 0 ? options.Host : listen[..colon].Trim('[', ']');
            options.Port = listenPort;
        }

        if ((section["host"] ?? section["net"]) is { } host)
        {
            options.Host = host;
        }

        if (section["port"] is { } port)
        {
            options.Port = int.TryParse(port, NumberStyles.Integer, CultureInfo.InvariantCulture, out var value) && value is >= -1 and <= 65535
                ? value
                : throw new InvalidOperationException($"{path}: port \"{port}\" is not a valid port number");
        }
    }

    private static void Validate(WebSocketOptions options, IConfiguration section, string path)
    {
        if (options.Port is null)
        {
            return;
        }

        if (!options.NoTls && !section.GetSection("tls").GetChildren().Any())
        {
            throw new InvalidOperationException($"{path}: websocket requires TLS configuration (a 'tls' block) unless no_tls is true");
        }

        foreach (var origin in options.AllowedOrigins)
        {
            if (!Uri.TryCreate(origin, UriKind.Absolute, out var uri) || (uri.Scheme != "http" && uri.Scheme != "https") || uri.Host.Length == 0)
            {
                throw new InvalidOperationException(
                    $"{path}: unable to parse allowed origin \"{origin}\": allowed origins must be absolute URLs with http or https scheme");
            }
        }

        foreach (var header in options.Headers.Keys)
        {
            if (ReservedHeaders.Contains(header) || header.StartsWith("sec-websocket-", StringComparison.OrdinalIgnoreCase))
            {
                throw new InvalidOperationException($"{path}: invalid header \"{header}\" not allowed");
            }
        }
    }

    private static string? Empty(string? value) => string.IsNullOrEmpty(value) ? null : value;

    private static bool ReadBool(IConfiguration section, string key, string path)
    {
        var value = section[key];
        return value is null
            ? false
            : value.Trim().ToLowerInvariant() switch
            {
                "true" or "yes" or "on" => true,
                "false" or "no" or "off" => false,
                _ => throw new InvalidOperationException($"{path}: expected '{key}' to be a boolean"),
            };
    }

    private static List<string> ReadList(IConfiguration section, string key)
    {
        var child = section.GetSection(key);
        var items = child.GetChildren().Select(c => c.Value).Where(v => !string.IsNullOrWhiteSpace(v)).Select(v => v!.Trim()).ToList();
        if (items.Count == 0 && !string.IsNullOrWhiteSpace(child.Value))
        {
            items.AddRange(child.Value.Split(',', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries));
        }

        return items;
    }

    /// <summary>A bare number of seconds (nats-server's integer form) or a Go-style duration: 500ms, 2s, 1m.</summary>
    private static TimeSpan? ParseDuration(string text)
    {
        text = text.Trim();
        if (double.TryParse(text, NumberStyles.Float, CultureInfo.InvariantCulture, out var seconds))
        {
            return TimeSpan.FromSeconds(seconds);
        }

        (string Suffix, double Milliseconds)[] units = [("ms", 1), ("s", 1000), ("m", 60_000), ("h", 3_600_000)];
        foreach (var (suffix, scale) in units)
        {
            if (text.EndsWith(suffix, StringComparison.Ordinal)
                && double.TryParse(text[..^suffix.Length], NumberStyles.Float, CultureInfo.InvariantCulture, out var value))
            {
                return TimeSpan.FromMilliseconds(value * scale);
            }
        }

        return null;
    }
}
