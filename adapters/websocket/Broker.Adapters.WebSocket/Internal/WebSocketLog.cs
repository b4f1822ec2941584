using Microsoft.Extensions.Logging;

namespace Broker.Adapters.WebSocket.Internal;

/// <summary>
/// Log messages of the WebSocket plugin (event ids 650-699, docs/logging.md). A client's bad handshake or bad frames are warnings,
/// never errors: errors are reserved for faults of the broker.
/// </summary>
internal static partial class WebSocketLog
{
    [LoggerMessage(650, LogLevel.Warning, "{Remote} - websocket handshake error: {Reason}")]
    public static partial void HandshakeRefused(ILogger logger, string remote, string reason);

    [LoggerMessage(651, LogLevel.Debug, "{Remote} - websocket handshake timeout")]
    public static partial void HandshakeTimeout(ILogger logger, string remote);

    [LoggerMessage(652, LogLevel.Warning, "{Remote} - websocket protocol error: {Reason}")]
    public static partial void ProtocolError(ILogger logger, string remote, string reason);

    [LoggerMessage(653, LogLevel.Debug, "{Remote} - websocket upgraded ({Path}, compression {Compression})")]
    public static partial void Upgraded(ILogger logger, string remote, string path, bool compression);

    [LoggerMessage(655, LogLevel.Warning, "Websocket advertise \"{Advertise}\" ignored: it is told to clients through a cluster, and this broker runs as a single server")]
    public static partial void AdvertiseIgnored(ILogger logger, string advertise);

    [LoggerMessage(654, LogLevel.Warning, "Websocket not configured with TLS. DO NOT USE IN PRODUCTION!")]
    public static partial void NoTls(ILogger logger);
}
