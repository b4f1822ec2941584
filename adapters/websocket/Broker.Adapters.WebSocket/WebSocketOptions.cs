namespace Broker.Adapters.WebSocket;

/// <summary>
/// Settings of the WebSocket listener, read from <c>Plugins:WebSocket</c> with nats-server's <c>websocket { }</c> key
/// names (in brackets). The listener runs only when a port is configured.
/// </summary>
public sealed class WebSocketOptions
{
    /// <summary>Interface to bind [<c>host</c>, or the host part of <c>listen</c>]. Default <c>0.0.0.0</c>.</summary>
    public string Host { get; set; } = "0.0.0.0";

    /// <summary>
    /// Port [<c>port</c>, or the port part of <c>listen</c>]; 0 or -1 picks a free port. Default none: no listener.
    /// </summary>
    public int? Port { get; set; }

    /// <summary>
    /// Serve ws:// without TLS [<c>no_tls</c>]. Default <see langword="false"/>: TLS is required, configured in the
    /// <c>tls</c> sub-section and served by the TLS plugin's middleware, and starting without it fails.
    /// </summary>
    public bool NoTls { get; set; }

    /// <summary>Refuse (403) an <c>Origin</c> other than the request's own host [<c>same_origin</c>]. Default <see langword="false"/>.</summary>
    public bool SameOrigin { get; set; }

    /// <summary>Origins accepted (403 otherwise), as <c>scheme://host[:port]</c> [<c>allowed_origins</c>]. Default empty: any.</summary>
    public IList<string> AllowedOrigins { get; set; } = [];

    /// <summary>Offer permessage-deflate (without context takeover) to clients that ask [<c>compression</c>]. Default <see langword="false"/>.</summary>
    public bool Compression { get; set; }

    /// <summary>
    /// How long a client may take to send its upgrade request, TLS handshake included [<c>handshake_timeout</c>].
    /// Default 2 seconds (nats-server has none by default).
    /// </summary>
    public TimeSpan HandshakeTimeout { get; set; } = TimeSpan.FromSeconds(2);

    /// <summary>
    /// The address a cluster would advertise for this listener to clients [<c>advertise</c>]. A single server has no
    /// cluster to tell, so it is only kept and a warning says so at start. Default none.
    /// </summary>
    public string? Advertise { get; set; }

    /// <summary>Cookie whose value fills an empty CONNECT <c>jwt</c> [<c>jwt_cookie</c>]. Default none.</summary>
    public string? JwtCookie { get; set; }

    /// <summary>Cookie whose value fills an empty CONNECT <c>user</c> [<c>user_cookie</c>]. Default none.</summary>
    public string? UserCookie { get; set; }

    /// <summary>Cookie whose value fills an empty CONNECT <c>pass</c> [<c>pass_cookie</c>]. Default none.</summary>
    public string? PassCookie { get; set; }

    /// <summary>Cookie whose value fills an empty CONNECT <c>auth_token</c> [<c>token_cookie</c>]. Default none.</summary>
    public string? TokenCookie { get; set; }

    /// <summary>Extra headers sent in the 101 response [<c>headers</c>]. Default none.</summary>
    public IDictionary<string, string> Headers { get; set; } = new Dictionary<string, string>(StringComparer.OrdinalIgnoreCase);

    /// <summary>
    /// Largest message a client may send, fragments and decompressed size included; larger ones are closed with
    /// 1009. Default: 8 × the broker's max_payload default (8 MiB), nats-server's limit for compressed messages.
    /// </summary>
    public long MaxMessageSize { get; set; } = 8L * 1024 * 1024;
}
