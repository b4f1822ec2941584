namespace Broker.Core.Internal.Protocol;

/// <summary>Why the parser stopped on bad input; each maps to nats-server's reply and close behaviour.</summary>
internal enum ProtocolError
{
    None,

    /// <summary><c>-ERR 'Unknown Protocol Operation'</c>, then close.</summary>
    UnknownOperation,

    /// <summary><c>-ERR 'maximum control line exceeded'</c>, then close.</summary>
    MaxControlLineExceeded,

    /// <summary><c>-ERR 'Maximum Payload Violation'</c>, then close.</summary>
    MaxPayloadExceeded,

    /// <summary><c>-ERR 'Authorization Violation'</c>, then close.</summary>
    AuthorizationViolation,

    /// <summary>Malformed arguments (missing or bad sizes, wrong argument count): close without -ERR.</summary>
    BadArguments,

    /// <summary>HPUB from a client that did not announce headers: close without -ERR.</summary>
    HeadersNotSupported,
}
