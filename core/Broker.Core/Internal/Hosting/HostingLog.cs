using Microsoft.Extensions.Logging;

namespace Broker.Core.Internal.Hosting;

/// <summary>Log messages of the broker's lifecycle and listeners (event ids 1-99, docs/logging.md).</summary>
internal static partial class HostingLog
{
    [LoggerMessage(1, LogLevel.Information, "Starting broker {Version} (matching nats-server {CompatibleVersion}), server id {ServerId}")]
    public static partial void Starting(ILogger logger, string version, string compatibleVersion, string serverId);

    [LoggerMessage(2, LogLevel.Information, "Listening for {Protocol} connections on {EndPoint} ({Listener})")]
    public static partial void Listening(ILogger logger, string protocol, string endPoint, string listener);

    [LoggerMessage(3, LogLevel.Information, "Broker is ready")]
    public static partial void Ready(ILogger logger);

    [LoggerMessage(4, LogLevel.Information, "Broker is shutting down")]
    public static partial void Stopping(ILogger logger);

    [LoggerMessage(5, LogLevel.Information, "Loaded plugin {PluginId} {PluginVersion}")]
    public static partial void PluginConfigured(ILogger logger, string pluginId, string pluginVersion);

    [LoggerMessage(6, LogLevel.Information, "Reloaded: {Change}")]
    public static partial void Reloaded(ILogger logger, string change);

    [LoggerMessage(7, LogLevel.Warning, "Configuration reload refused: {Reason}")]
    public static partial void ReloadRefused(ILogger logger, string reason);

    [LoggerMessage(8, LogLevel.Information, "Entering lame duck mode, stop accepting new clients")]
    public static partial void EnteringLameDuckMode(ILogger logger);

    [LoggerMessage(9, LogLevel.Information, "Lame duck mode: closing {Count} existing clients over {Duration}")]
    public static partial void ClosingClients(ILogger logger, int count, TimeSpan duration);

    [LoggerMessage(10, LogLevel.Error, "Connection from {Remote} on listener {Listener} failed")]
    public static partial void ConnectionFailed(ILogger logger, string listener, string remote, Exception exception);

    [LoggerMessage(11, LogLevel.Information, "Connection from {Remote} on listener {Listener} refused by middleware {Middleware}")]
    public static partial void ConnectionRefused(ILogger logger, string listener, string middleware, string remote);

    [LoggerMessage(12, LogLevel.Error, "Hosted service {Service} failed to stop")]
    public static partial void ServiceStopFailed(ILogger logger, string service, Exception exception);

    [LoggerMessage(13, LogLevel.Critical, "{Failure}")]
    public static partial void ListenFailed(ILogger logger, string failure);

    [LoggerMessage(14, LogLevel.Information, "Closed {Count} connections to fall within max_connections")]
    public static partial void ClosedBeyondMaxConnections(ILogger logger, int count);
}
