namespace Broker.Core.Internal.Clients;

/// <summary>Why a connection closed; the texts are nats-server's <c>ClosedState</c> strings shown in /connz.</summary>
internal enum CloseReason
{
    None,
    ClientClosed,
    AuthenticationTimeout,
    AuthenticationViolation,
    SlowConsumerPendingBytes,
    SlowConsumerWriteDeadline,
    StaleConnection,
    ParseError,
    MaxPayloadExceeded,
    MaxControlLineExceeded,
    MaxConnectionsExceeded,
    MaxAccountConnectionsExceeded,
    BadClientProtocol,
    NoRespondersRequiresHeaders,
    ReadError,
    ServerShutdown,
    TlsHandshakeError,

    /// <summary>The user's or the account's JWT expired (operator mode).</summary>
    AuthenticationExpired,

    /// <summary>The account's JWT revoked the user's (operator mode, a claims update).</summary>
    Revocation,

    /// <summary>A claims update lowered the subscription limit to or below what the connection has.</summary>
    MaxSubscriptionsExceeded,
}

internal static class CloseReasonText
{
    public static string ToText(this CloseReason reason) => reason switch
    {
        CloseReason.ClientClosed => "Client Closed",
        CloseReason.AuthenticationTimeout => "Authentication Timeout",
        CloseReason.AuthenticationViolation => "Authentication Failure",
        CloseReason.AuthenticationExpired => "Authentication Expired",
        CloseReason.SlowConsumerPendingBytes => "Slow Consumer (Pending Bytes)",
        CloseReason.SlowConsumerWriteDeadline => "Slow Consumer (Write Deadline)",
        CloseReason.StaleConnection => "Stale Connection",
        CloseReason.ParseError => "Parse Error",
        CloseReason.MaxPayloadExceeded => "Maximum Message Payload Exceeded",
        CloseReason.MaxControlLineExceeded => "Maximum Control Line Exceeded",
        CloseReason.MaxConnectionsExceeded => "Maximum Connections Exceeded",
        CloseReason.MaxAccountConnectionsExceeded => "Maximum Account Connections Exceeded",
        CloseReason.BadClientProtocol => "Bad Client Protocol Version",
        CloseReason.NoRespondersRequiresHeaders => "No Responders Requires Headers",
        CloseReason.ReadError => "Read Error",
        CloseReason.ServerShutdown => "Server Shutdown",
        CloseReason.TlsHandshakeError => "TLS Handshake Failure",
        CloseReason.Revocation => "Credentials Revoked",
        CloseReason.MaxSubscriptionsExceeded => "Maximum Subscriptions Exceeded",
        _ => string.Empty,
    };

    /// <summary>The close reason of a protocol error, as nats-server's (a parse error unless a limit or authorization).</summary>
    public static CloseReason ForProtocolError(Protocol.ProtocolError error) => error switch
    {
        Protocol.ProtocolError.MaxPayloadExceeded => CloseReason.MaxPayloadExceeded,
        Protocol.ProtocolError.MaxControlLineExceeded => CloseReason.MaxControlLineExceeded,
        Protocol.ProtocolError.AuthorizationViolation => CloseReason.AuthenticationViolation,
        _ => CloseReason.ParseError,
    };
}
