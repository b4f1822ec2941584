using Microsoft.Extensions.Logging;

namespace Broker.Core.Internal.Clients;

/// <summary>Log messages of in-process clients (event ids 200-299, docs/logging.md).</summary>
internal static partial class InProcessLog
{
    [LoggerMessage(200, LogLevel.Error, "In-process client {Client}: handler for {Subject} failed")]
    public static partial void HandlerFailed(ILogger logger, string client, string subject, Exception exception);
}
