using Microsoft.Extensions.Logging;

namespace Broker.Host.Logging;

/// <summary>Log messages of the executable's lifecycle (event ids 600-619).</summary>
internal static partial class HostLog
{
    [LoggerMessage(600, LogLevel.Information, "Received {Signal}, shutting down (send it again to exit at once)")]
    public static partial void SignalReceived(ILogger logger, string signal);

    [LoggerMessage(601, LogLevel.Warning, "Received {Signal} again, exiting without waiting for connections to close")]
    public static partial void ForcedExit(ILogger logger, string signal);

    [LoggerMessage(602, LogLevel.Error, "Broker failed to start: {Reason}")]
    public static partial void StartFailed(ILogger logger, string reason);

    [LoggerMessage(604, LogLevel.Debug, "Start failure details")]
    public static partial void StartFailureDetails(ILogger logger, Exception exception);

    [LoggerMessage(603, LogLevel.Information, "Server is stopped")]
    public static partial void Stopped(ILogger logger);
}
