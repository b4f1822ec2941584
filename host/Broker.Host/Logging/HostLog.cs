using Microsoft.Extensions.Logging;

namespace Broker.Host.Logging;

/// <summary>Log messages of the executable's lifecycle (event ids 700-799, docs/logging.md).</summary>
internal static partial class HostLog
{
    [LoggerMessage(700, LogLevel.Information, "Trapped \"{Signal}\" signal")]
    public static partial void SignalReceived(ILogger logger, string signal);

    [LoggerMessage(701, LogLevel.Warning, "Received {Signal} again, exiting without waiting for connections to close")]
    public static partial void ForcedExit(ILogger logger, string signal);

    [LoggerMessage(702, LogLevel.Error, "Broker failed to start: {Reason}")]
    public static partial void StartFailed(ILogger logger, string reason);

    [LoggerMessage(703, LogLevel.Information, "Server is stopped")]
    public static partial void Stopped(ILogger logger);

    [LoggerMessage(704, LogLevel.Debug, "Start failure details")]
    public static partial void StartFailureDetails(ILogger logger, Exception exception);

    [LoggerMessage(705, LogLevel.Information, "Using configuration file: {File}")]
    public static partial void UsingConfigFile(ILogger logger, string file);

    [LoggerMessage(706, LogLevel.Warning, "{Diagnostic}")]
    public static partial void ConfigNotice(ILogger logger, string diagnostic);


    [LoggerMessage(708, LogLevel.Information, "Reloaded server configuration")]
    public static partial void Reloaded(ILogger logger);

    [LoggerMessage(709, LogLevel.Error, "Failed to reload server configuration: {Reason}")]
    public static partial void ReloadFailed(ILogger logger, string reason);

    [LoggerMessage(710, LogLevel.Error, "Error writing ports file ({Path}): {Reason}")]
    public static partial void PortsFileFailed(ILogger logger, string path, string reason);

    [LoggerMessage(711, LogLevel.Debug, "Wrote ports file {Path}")]
    public static partial void PortsFileWritten(ILogger logger, string path);

    [LoggerMessage(712, LogLevel.Information, "Reopened log file")]
    public static partial void LogReopened(ILogger logger);

    [LoggerMessage(713, LogLevel.Error, "Failed to reopen log file: {Reason}")]
    public static partial void LogReopenFailed(ILogger logger, string reason);

    [LoggerMessage(714, LogLevel.Information, "Reloaded: {Change}")]
    public static partial void ReloadedSetting(ILogger logger, string change);

    [LoggerMessage(715, LogLevel.Debug, "Start-up warm-up skipped: {Reason}")]
    public static partial void WarmUpSkipped(ILogger logger, string reason);
}
