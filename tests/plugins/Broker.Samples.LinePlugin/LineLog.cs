using Microsoft.Extensions.Logging;

namespace Broker.Samples.LinePlugin;

/// <summary>
/// The sample's log messages (event ids 1200-1299, docs/logging.md); a plugin logs through ILogger only, the host
/// decides where lines go.
/// </summary>
internal static partial class LineLog
{
    [LoggerMessage(1201, LogLevel.Debug, "Line connection from {Remote} opened")]
    public static partial void Opened(ILogger logger, string remote);

    [LoggerMessage(1202, LogLevel.Debug, "Line connection from {Remote} closed")]
    public static partial void Closed(ILogger logger, string remote);

    [LoggerMessage(1203, LogLevel.Information, "Line connection from {Remote} refused: {MaxConnections} connections are open")]
    public static partial void Refused(ILogger logger, string remote, int maxConnections);

    [LoggerMessage(1204, LogLevel.Warning, "Line connection from {Remote} closed by the broker: {Reason}")]
    public static partial void ClosedByBroker(ILogger logger, string remote, string reason);

    [LoggerMessage(1205, LogLevel.Information, "Line connection from {Remote} not authenticated: {Reason}")]
    public static partial void NotAuthenticated(ILogger logger, string remote, string reason);
}
