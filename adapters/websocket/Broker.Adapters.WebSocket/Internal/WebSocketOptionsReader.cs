using System.Globalization;
using Broker.Abstractions;
using Microsoft.Extensions.Configuration;

namespace Broker.Adapters.WebSocket.Internal;

/// <summary>
/// Reads <see cref="WebSocketOptions"/> from <c>Plugins:WebSocket</c> with nats-server's key names through the
/// contract's shared reader (<see cref="ConfigurationValues"/>) and checks them as nats-server's
/// <c>validateWebsocketOptions</c> does; every error is a <see cref="PluginConfigurationException"/> naming the key.
/// </summary>
internal static class WebSocketOptionsReader
{
    private static readonly string[] OriginKeys =
    [
        "allowed_origins", "allowed_origin", "allow_origins", "allow_origin", "origins", "origin",
    ];

    private static readonly string[] Keys =
    [
        "listen", "port", "host", "net", "advertise", "no_tls", "tls", "same_origin", "handshake_timeout", "compress",
        "compression", "jwt_cookie", "user_cookie", "pass_cookie", "token_cookie", "headers", "max_message_size",
        .. OriginKeys,
    ];

    // Headers the upgrade response sets itself (nats-server refuses these in 'headers').
    private static readonly HashSet<string> ReservedHeaders = new(StringComparer.OrdinalIgnoreCase)
    {
        "host", "content-length", "connection", "upgrade", "nats-no-masking",
    };

    /// <exception cref="PluginConfigurationException">A key is unknown or unsupported, or a value is invalid.</exception>
    public static WebSocketOptions Read(IConfiguration section)
    {
        foreach (var child in section.GetChildren())
        {
            if (child.Key.Equals("authorization", StringComparison.OrdinalIgnoreCase)
                || child.Key.Equals("authentication", StringComparison.OrdinalIgnoreCase)
                || child.Key.Equals("no_auth_user", StringComparison.OrdinalIgnoreCase))
            {
                throw section.Refuse(child.Key, $"'{child.Key}' for WebSocket clients is not supported yet; configure authorization for all clients instead");
            }
        }

        section.RejectUnknownKeys(Keys);
        var options = new WebSocketOptions
        {
            NoTls = section.GetBool("no_tls", false),
            SameOrigin = section.GetBool("same_origin", false),
            Compression = section.GetBool("compression", false) || section.GetBool("compress", false),
            Advertise = Empty(section["advertise"]),
            JwtCookie = Empty(section["jwt_cookie"]),
            UserCookie = Empty(section["user_cookie"]),
            PassCookie = Empty(section["pass_cookie"]),
            TokenCookie = Empty(section["token_cookie"]),
        };

        if (section.GetDuration("handshake_timeout") is { } timeout)
        {
            options.HandshakeTimeout = timeout;
        }

        ReadEndPoint(section, options);
        foreach (var key in OriginKeys)
        {
            foreach (var origin in section.GetList(key))
            {
                options.AllowedOrigins.Add(origin);
            }
        }

        if (section.GetSize("max_message_size") is { } max)
        {
            options.MaxMessageSize = max > 0 ? max : throw section.Refuse("max_message_size", "must be a positive number of bytes");
        }

        foreach (var header in section.GetSection("headers").GetChildren())
        {
            options.Headers[header.Key] = header.Value ?? "";
        }

        Validate(options, section);
        return options;
    }

    private static void ReadEndPoint(IConfiguration section, WebSocketOptions options)
    {
        var host = options.Host;
        var port = options.Port;
        section.GetListenEndPoint(ref host, ref port);
        options.Host = host;
        options.Port = port;
    }

    private static void Validate(WebSocketOptions options, IConfiguration section)
    {
        if (options.Port is null)
        {
            return;
        }

        if (!options.NoTls && !section.GetSection("tls").GetChildren().Any())
        {
            throw section.Refuse("no_tls", "websocket requires TLS configuration (a 'tls' block) unless no_tls is true");
        }

        foreach (var origin in options.AllowedOrigins)
        {
            if (!Uri.TryCreate(origin, UriKind.Absolute, out var uri) || (uri.Scheme != "http" && uri.Scheme != "https") || uri.Host.Length == 0)
            {
                throw section.Refuse(null, $"unable to parse allowed origin \"{origin}\": allowed origins must be absolute URLs with http or https scheme");
            }
        }

        foreach (var header in options.Headers.Keys)
        {
            if (ReservedHeaders.Contains(header) || header.StartsWith("sec-websocket-", StringComparison.OrdinalIgnoreCase))
            {
                throw section.Refuse("headers:" + header, $"invalid header \"{header}\" not allowed");
            }
        }
    }

    private static string? Empty(string? value) => string.IsNullOrEmpty(value) ? null : value;
}
