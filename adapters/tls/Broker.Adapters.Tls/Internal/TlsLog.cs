using Microsoft.Extensions.Logging;

namespace Broker.Adapters.Tls.Internal;

/// <summary>
/// Log messages of the TLS plugin (event ids 600-649, docs/logging.md). A client's failed handshake is a warning, never an error:
/// errors are reserved for faults of the broker.
/// </summary>
internal static partial class TlsLog
{
    [LoggerMessage(600, LogLevel.Information, "TLS {Mode} on listener {Listener}")]
    public static partial void Enabled(ILogger logger, string listener, string mode);

    [LoggerMessage(601, LogLevel.Debug, "{Remote} on {Listener}: TLS {Protocol} established with {CipherSuite}")]
    public static partial void Established(ILogger logger, string listener, string remote, string protocol, string cipherSuite);

    [LoggerMessage(602, LogLevel.Warning, "{Remote} on {Listener}: TLS handshake error: {Reason}")]
    public static partial void HandshakeFailed(ILogger logger, string listener, string remote, string reason);

    [LoggerMessage(603, LogLevel.Debug, "{Remote} on {Listener}: TLS handshake timeout")]
    public static partial void HandshakeTimeout(ILogger logger, string listener, string remote);

    [LoggerMessage(604, LogLevel.Debug, "{Remote} on {Listener}: clear text where TLS is required")]
    public static partial void ClearTextRefused(ILogger logger, string listener, string remote);

    [LoggerMessage(605, LogLevel.Warning, "{Remote} on {Listener}: client certificate {Subject} is not pinned")]
    public static partial void NotPinned(ILogger logger, string listener, string remote, string subject);
}
