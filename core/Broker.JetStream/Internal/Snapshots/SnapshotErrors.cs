using Broker.JetStream.Internal.Models;

namespace Broker.JetStream.Internal.Snapshots;

/// <summary>nats-server's errors of snapshots and restores (<c>errors.json</c>).</summary>
internal static class SnapshotErrors
{
    /// <summary><c>JSSnapshotDeliverSubjectInvalidErr</c>.</summary>
    public static ApiError DeliverSubjectInvalid { get; } = new(400, 10015, "deliver subject not valid");

    /// <summary><c>JSStreamNameExistRestoreFailedErr</c>.</summary>
    public static ApiError NameExistRestoreFailed { get; } = new(400, 10130, "stream name already in use, cannot restore");

    /// <summary><c>JSStreamSnapshotErrF</c>.</summary>
    public static ApiError SnapshotFailed(string error) => new(500, 10064, "snapshot failed: " + error);

    /// <summary><c>JSStreamRestoreErrF</c>.</summary>
    public static ApiError RestoreFailed(string error) => new(500, 10062, "restore failed: " + error);
}
