namespace Broker.Abstractions;

/// <summary>
/// A stream store's counters at one moment (nats-server's <c>StreamState</c> without the detail lists).
/// </summary>
/// <param name="Messages">Messages stored.</param>
/// <param name="Bytes">
/// Bytes stored, as the store accounts them (the memory store: subject + headers + payload + 16 per message, as
/// nats-server's). <see cref="StreamStoreConfig.MaxBytes"/> is enforced against this figure.
/// </param>
/// <param name="FirstSequence">The first sequence still stored; <see cref="LastSequence"/> + 1 when empty.</param>
/// <param name="FirstTimestamp">The first message's timestamp (ns since the Unix epoch), 0 when empty.</param>
/// <param name="LastSequence">The last sequence assigned (stored, skipped or since removed); 0 for a new stream.</param>
/// <param name="LastTimestamp">The last message's timestamp (ns since the Unix epoch), 0 for a new stream.</param>
/// <param name="SubjectCount">Distinct subjects stored.</param>
/// <param name="DeletedCount">Sequences between the first and the last that are not stored (interior deletes).</param>
public readonly record struct StreamState(
    ulong Messages,
    ulong Bytes,
    ulong FirstSequence,
    long FirstTimestamp,
    ulong LastSequence,
    long LastTimestamp,
    int SubjectCount,
    int DeletedCount);

/// <summary>Messages of one subject or filter (nats-server's <c>SimpleState</c>).</summary>
/// <param name="Messages">How many messages.</param>
/// <param name="First">The first matching sequence, 0 when none.</param>
/// <param name="Last">The last matching sequence, 0 when none.</param>
public readonly record struct SubjectState(ulong Messages, ulong First, ulong Last);

/// <summary>The outcome of <see cref="IStreamStore.Store(ReadOnlySpan{byte}, in System.Buffers.ReadOnlySequence{byte}, in System.Buffers.ReadOnlySequence{byte})"/>.</summary>
/// <param name="Status">Whether the message was stored, or why not.</param>
/// <param name="Sequence">The sequence assigned; 0 when not stored.</param>
/// <param name="Timestamp">The store timestamp (ns since the Unix epoch); 0 when not stored.</param>
public readonly record struct StoreResult(StoreStatus Status, ulong Sequence, long Timestamp)
{
    /// <summary>Whether <see cref="Status"/> is <see cref="StoreStatus.Stored"/>.</summary>
    public bool IsStored => Status == StoreStatus.Stored;
}

/// <summary>Counts of a pending computation (<see cref="IStreamStore.NumPending"/>).</summary>
/// <param name="Total">Messages at or after the start sequence matching the filter.</param>
/// <param name="ValidThrough">The last sequence the count covers (the stream's last sequence at the time).</param>
public readonly record struct PendingCount(ulong Total, ulong ValidThrough);

/// <summary>
/// Called by a stream store after its contents changed, outside its locks (nats-server's <c>StorageUpdateHandler</c>):
/// with one message's sequence and subject when one message was added (+1) or removed (-1), with sequence 0 and an
/// empty subject for bulk changes (purges, compaction). The engine keeps usage totals and tells consumers about
/// messages the store removed on its own (age and limits).
/// </summary>
/// <param name="messages">Change in the message count.</param>
/// <param name="bytes">Change in <see cref="StreamState.Bytes"/>.</param>
/// <param name="sequence">The message's sequence, or 0 for a bulk change.</param>
/// <param name="subject">The message's subject, or empty for a bulk change.</param>
public delegate void StorageUpdateHandler(long messages, long bytes, ulong sequence, ReadOnlySpan<byte> subject);

/// <summary>
/// Called by a stream store, outside its locks, when <see cref="StreamStoreConfig.MaxAge"/> or a message's own time to
/// live (<see cref="StoreOptions.TimeToLive"/>) expires the last message of its subject (contract 1.4; nats-server's
/// <c>handleRemovalOrSdm</c>). The engine stores a subject delete marker there, with <c>Nats-Rollup: sub</c>.
/// </summary>
/// <remarks>
/// The stores of this repository keep the expired message until the handler returns, so the marker's rollup removes
/// it and a reader never finds the subject empty between the two, then remove it themselves if it is still there (no
/// marker was stored: the message was a marker itself, or a newer message came). A store may instead remove the
/// message first and call the handler after the storage update handler heard of the removal, as contract 1.4 first
/// said: the engine stores the marker in both cases, unless a newer message came on the subject.
/// </remarks>
/// <param name="sequence">The removed message's sequence.</param>
/// <param name="subject">Its subject.</param>
/// <param name="headers">Its NATS header block, or empty.</param>
public delegate void SubjectExpiredHandler(ulong sequence, ReadOnlySpan<byte> subject, ReadOnlySpan<byte> headers);
