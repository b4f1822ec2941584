using Microsoft.Extensions.Logging;

namespace Broker.Core.Internal.Routes;

/// <summary>
/// Log messages about routes to other cluster members (event ids 1850-1899, docs/logging.md), worded as nats-server's.
/// A member's refusal or a lost route is a warning (explicit routes retry); errors are kept for the broker's own faults.
/// </summary>
internal static partial class RouteLog
{
    [LoggerMessage(1850, LogLevel.Information, "Listening for route connections on {EndPoint}")]
    public static partial void Listening(ILogger logger, string endPoint);

    [LoggerMessage(1851, LogLevel.Information, "{Remote} - rid:{Id} - Route connection created")]
    public static partial void Created(ILogger logger, string remote, ulong id);

    [LoggerMessage(1852, LogLevel.Information, "{Remote} - rid:{Id} - Router connection closed: {Reason}")]
    public static partial void Closed(ILogger logger, string remote, ulong id, string reason);

    [LoggerMessage(1853, LogLevel.Warning, "Error trying to connect to route (attempt {Attempt}): {Reason}")]
    public static partial void ConnectFailed(ILogger logger, int attempt, string reason);

    [LoggerMessage(1854, LogLevel.Warning, "{Remote} - rid:{Id} - {Message}")]
    public static partial void Refused(ILogger logger, string remote, ulong id, string message);

    [LoggerMessage(1855, LogLevel.Information, "Cluster name is {Name}")]
    public static partial void ClusterName(ILogger logger, string name);

    [LoggerMessage(1856, LogLevel.Information, "{Remote} - rid:{Id} - Registering remote route \"{ServerId}\" ({ServerName})")]
    public static partial void Registered(ILogger logger, string remote, ulong id, string serverId, string serverName);

    [LoggerMessage(1857, LogLevel.Warning, "{Remote} - rid:{Id} - TLS route handshake error: {Reason}")]
    public static partial void TlsHandshakeFailed(ILogger logger, string remote, ulong id, string reason);

    [LoggerMessage(1858, LogLevel.Warning, "TLS certificate chain and hostname of solicited routes will not be verified. DO NOT USE IN PRODUCTION!")]
    public static partial void TlsInsecure(ILogger logger);
}
