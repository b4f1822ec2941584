using Microsoft.Extensions.Logging;

namespace Broker.JetStream.Internal.Snapshots;

/// <summary>The log lines of snapshots and restores (nats-server's notices and warnings of <c>jetstream_api.go</c>).</summary>
internal static partial class SnapshotLog
{
    [LoggerMessage(1090, LogLevel.Warning, "Snapshot of stream '{Account} > {Stream}' failed: {Reason}")]
    public static partial void SnapshotFailed(ILogger logger, string account, string stream, string reason);

    [LoggerMessage(1091, LogLevel.Information, "Completed snapshot of {Bytes} bytes for stream '{Account} > {Stream}'")]
    public static partial void SnapshotCompleted(ILogger logger, long bytes, string account, string stream);

    [LoggerMessage(1092, LogLevel.Information, "Starting restore for stream '{Account} > {Stream}'")]
    public static partial void RestoreStarted(ILogger logger, string account, string stream);

    [LoggerMessage(1093, LogLevel.Warning, "Restore failed for stream '{Account} > {Stream}': {Reason}")]
    public static partial void RestoreFailed(ILogger logger, string account, string stream, string reason);

    [LoggerMessage(1094, LogLevel.Information, "Completed restore of {Bytes} bytes for stream '{Account} > {Stream}'")]
    public static partial void RestoreCompleted(ILogger logger, long bytes, string account, string stream);
}
