namespace Broker.Core.Internal.Protocol;

/// <summary>The exact protocol lines nats-server sends (reference §1.5), as UTF-8.</summary>
internal static class ServerMessages
{
    public static ReadOnlySpan<byte> Ok => "+OK\r\n"u8;

    public static ReadOnlySpan<byte> Ping => "PING\r\n"u8;

    public static ReadOnlySpan<byte> Pong => "PONG\r\n"u8;

    public static ReadOnlySpan<byte> ErrUnknownOperation => "-ERR 'Unknown Protocol Operation'\r\n"u8;

    public static ReadOnlySpan<byte> ErrMaxControlLine => "-ERR 'maximum control line exceeded'\r\n"u8;

    public static ReadOnlySpan<byte> ErrMaxPayload => "-ERR 'Maximum Payload Violation'\r\n"u8;

    public static ReadOnlySpan<byte> ErrAuthorization => "-ERR 'Authorization Violation'\r\n"u8;

    /// <summary>A live client's user JWT expired (nats-server <c>authExpired</c>).</summary>
    public static ReadOnlySpan<byte> ErrUserAuthenticationExpired => "-ERR 'User Authentication Expired'\r\n"u8;

    /// <summary>A claims update revoked a live client's user JWT (nats-server <c>sendErrAndDebug("User Authentication Revoked")</c>).</summary>
    public static ReadOnlySpan<byte> ErrUserAuthenticationRevoked => "-ERR 'User Authentication Revoked'\r\n"u8;

    /// <summary>A live client's account JWT expired (nats-server <c>accountAuthExpired</c>).</summary>
    public static ReadOnlySpan<byte> ErrAccountAuthenticationExpired => "-ERR 'Account Authentication Expired'\r\n"u8;

    public static ReadOnlySpan<byte> ErrAuthenticationTimeout => "-ERR 'Authentication Timeout'\r\n"u8;

    public static ReadOnlySpan<byte> ErrInvalidPublishSubject => "-ERR 'Invalid Publish Subject'\r\n"u8;

    public static ReadOnlySpan<byte> ErrInvalidSubject => "-ERR 'Invalid Subject'\r\n"u8;

    public static ReadOnlySpan<byte> ErrMaxSubscriptions => "-ERR 'maximum subscriptions exceeded'\r\n"u8;

    public static ReadOnlySpan<byte> ErrMaxConnections => "-ERR 'maximum connections exceeded'\r\n"u8;

    /// <summary>The account's <c>max_connections</c> is reached (nats-server <c>ErrTooManyAccountConnections</c>).</summary>
    public static ReadOnlySpan<byte> ErrMaxAccountConnections => "-ERR 'maximum account active connections exceeded'\r\n"u8;

    public static ReadOnlySpan<byte> ErrStaleConnection => "-ERR 'Stale Connection'\r\n"u8;

    public static ReadOnlySpan<byte> ErrInvalidClientProtocol => "-ERR 'invalid client protocol'\r\n"u8;

    public static ReadOnlySpan<byte> ErrSecureConnectionRequired => "-ERR 'Secure Connection - TLS Required'\r\n"u8;

    public static ReadOnlySpan<byte> ErrNoRespondersRequiresHeaders => "-ERR 'no responders requires headers support'\r\n"u8;

    /// <summary>The -ERR line for a parser error, or empty when nats-server closes silently.</summary>
    public static ReadOnlySpan<byte> For(ProtocolError error) => error switch
    {
        ProtocolError.UnknownOperation => ErrUnknownOperation,
        ProtocolError.MaxControlLineExceeded => ErrMaxControlLine,
        ProtocolError.MaxPayloadExceeded => ErrMaxPayload,
        ProtocolError.AuthorizationViolation => ErrAuthorization,
        _ => default,
    };

    /// <summary>
    /// <c>-ERR 'Permissions Violation for ... "subject"'</c> with nats-server's %q quoting, an optional
    /// <c>using queue "q"</c> and a suffix.
    /// </summary>
    public static byte[] PermissionViolation(string prefix, ReadOnlySpan<byte> subject, ReadOnlySpan<byte> queue, string suffix) =>
        System.Text.Encoding.UTF8.GetBytes("-ERR '" + prefix + Clients.GoQuote.Quote(subject)
            + (queue.IsEmpty ? string.Empty : " using queue " + Clients.GoQuote.Quote(queue)) + suffix + "'\r\n");
}
