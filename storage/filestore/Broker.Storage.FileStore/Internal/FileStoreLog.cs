using Microsoft.Extensions.Logging;

namespace Broker.Storage.FileStore.Internal;

/// <summary>The file store's log events (ids 1400-1499, docs/logging.md).</summary>
internal static partial class FileStoreLog
{
    /// <remarks>
    /// The numbers are passed boxed, as JetStream's own restore line does (JetStreamLog.Recovered): value-type
    /// parameters instantiate the logging framework's generic code over them, which no ReadyToRun image holds for a
    /// plugin (14 methods the JIT compiled at every restart, docs/benchmarks.md "start5"). The line and its properties
    /// are the same: the logger boxes every value to format and capture it anyway.
    /// </remarks>
    public static void Recovered(ILogger logger, string stream, ulong messages, ulong first, ulong last, ulong lost, double milliseconds)
    {
        if (logger.IsEnabled(LogLevel.Information))
        {
#pragma warning disable CA1873 // The boxing is the point (above), once per stream at start, and only when the line is written.
            RecoveredBoxed(logger, stream, messages, first, last, lost, milliseconds);
#pragma warning restore CA1873
        }
    }

    [LoggerMessage(EventId = 1400, Level = LogLevel.Information, Message = "Stream {Stream} recovered: {Messages} messages, sequences {First}-{Last}, {Lost} lost, in {Milliseconds:F1} ms")]
    private static partial void RecoveredBoxed(ILogger logger, string stream, object messages, object first, object last, object lost, object milliseconds);

    [LoggerMessage(EventId = 1401, Level = LogLevel.Error, Message = "Stream {Stream}: message {Sequence} in block {Block} is corrupt or missing on disk; it is removed and counted lost")]
    public static partial void MessageLost(ILogger logger, string stream, ulong sequence, uint block);

    [LoggerMessage(EventId = 1402, Level = LogLevel.Error, Message = "Stream {Stream}: writing to disk failed; the stream refuses writes until restarted")]
    public static partial void WriteFailed(ILogger logger, string stream, Exception exception);

    [LoggerMessage(EventId = 1403, Level = LogLevel.Warning, Message = "Stream {Stream}: block {Block} had {Bytes} bytes after its last valid record (a write torn by a crash); cut off")]
    public static partial void TailTruncated(ILogger logger, string stream, uint block, long bytes);

    [LoggerMessage(EventId = 1404, Level = LogLevel.Error, Message = "Stream {Stream}: block {Block} had {Bytes} corrupt bytes between valid records; the records there are lost")]
    public static partial void CorruptRecordsSkipped(ILogger logger, string stream, uint block, int bytes);

    [LoggerMessage(EventId = 1405, Level = LogLevel.Error, Message = "Stream {Stream}: block {Block} cannot be read (bad header or checksum); its messages are lost")]
    public static partial void BlockUnreadable(ILogger logger, string stream, uint block);

    [LoggerMessage(EventId = 1406, Level = LogLevel.Information, Message = "Stream {Stream}: not stopped cleanly; sequences {From}-{To} may have been handed out before the stop and are skipped")]
    public static partial void SequencesSkipped(ILogger logger, string stream, ulong from, ulong to);

    [LoggerMessage(EventId = 1407, Level = LogLevel.Warning, Message = "Stream {Stream}: checkpoint index.db is stale or corrupt; rebuilding the state from the blocks")]
    public static partial void CheckpointRejected(ILogger logger, string stream);

    [LoggerMessage(EventId = 1408, Level = LogLevel.Error, Message = "Directory {Directory} is not a stream this store can open: {Reason}")]
    public static partial void StreamUnreadable(ILogger logger, string directory, string reason);

    [LoggerMessage(EventId = 1409, Level = LogLevel.Error, Message = "Consumer state in {Directory} cannot be read; the consumer starts without it")]
    public static partial void ConsumerUnreadable(ILogger logger, string directory);

    [LoggerMessage(EventId = 1410, Level = LogLevel.Error, Message = "Consumer {Consumer}: writing its state failed")]
    public static partial void ConsumerWriteFailed(ILogger logger, string consumer, Exception exception);

    [LoggerMessage(EventId = 1411, Level = LogLevel.Warning, Message = "The folder {Directory} of a deleted consumer could not be removed; the stream's next start tries again")]
    public static partial void DeletedFolderNotRemoved(ILogger logger, string directory, Exception exception);
}
