using Microsoft.Extensions.Logging;

namespace Broker.Core.Internal.Monitoring;

/// <summary>Log messages of the HTTP monitor (event ids 300-399, docs/logging.md).</summary>
internal static partial class MonitorLog
{
    [LoggerMessage(300, LogLevel.Debug, "Monitor request {Method} {Path} answered {Status}")]
    public static partial void Request(ILogger logger, string method, string path, int status);

    [LoggerMessage(301, LogLevel.Debug, "Monitor connection from {Remote} sent a bad request ({Status}: {Reason})")]
    public static partial void BadRequest(ILogger logger, string remote, int status, string reason);

    [LoggerMessage(302, LogLevel.Warning, "Healthcheck failed: {Error}")]
    public static partial void HealthcheckFailed(ILogger logger, string error);

    [LoggerMessage(303, LogLevel.Error, "Monitor endpoint {Path} failed")]
    public static partial void EndpointFailed(ILogger logger, string path, Exception exception);
}
