using System.Buffers;

namespace Broker.Abstractions;

/// <summary>
/// The messages of one JetStream stream, modelled on nats-server's <c>StreamStore</c> (<c>server/store.go</c>): append
/// with a sequence and timestamp, load by sequence, next matching a filter, last by subject, remove, purge, compact,
/// truncate, and the state queries the engine's API and consumers need. The store enforces the limits of its
/// <see cref="StreamStoreConfig"/> (messages, bytes, age, per subject, discard policy); everything else (headers,
/// dedupe, retention, consumers) is the engine's.
/// </summary>
/// <remarks>
/// <para>
/// Every member is thread-safe: the engine calls stores from publishers' threads, consumer deliveries, timers and API
/// requests at once. Appends are serialised by the engine per stream, but loads and state queries run concurrently
/// with them.
/// </para>
/// <para>
/// Durability is separate from storing: <see cref="Store(ReadOnlySpan{byte}, in ReadOnlySequence{byte}, in ReadOnlySequence{byte})"/> assigns the sequence at once, and
/// <see cref="WaitForDurableAsync"/> completes when that message (and every earlier one) is durable under the store's
/// policy. The engine acknowledges a publish only then, without a thread per message: a store that syncs in groups
/// completes one task for the whole group (group commit). A memory store is durable as soon as it stores, so its
/// <see cref="DurableSequence"/> follows <see cref="StreamState.LastSequence"/> and its waits complete synchronously.
/// </para>
/// <para>
/// Subjects and filters are UTF-8. A filter is a subject that may contain <c>*</c> and <c>&gt;</c> wildcards; an empty
/// filter or <c>&gt;</c> matches everything.
/// </para>
/// </remarks>
public interface IStreamStore : IAsyncDisposable
{
    /// <summary>The configuration in force.</summary>
    StreamStoreConfig Config { get; }

    /// <summary>The last sequence such that it and every earlier message are durable; see <see cref="WaitForDurableAsync"/>.</summary>
    ulong DurableSequence { get; }

    /// <summary>
    /// Appends a message with the next sequence and the current time, enforcing the configured limits: under
    /// <see cref="DiscardPolicy.Old"/> it removes the oldest messages (of the stream or of the subject) to make room,
    /// under <see cref="DiscardPolicy.New"/> it refuses the message with a limit status.
    /// </summary>
    /// <param name="subject">The subject (a literal).</param>
    /// <param name="headers">The NATS header block, or empty.</param>
    /// <param name="payload">The payload.</param>
    /// <returns>The status, sequence and timestamp.</returns>
    StoreResult Store(ReadOnlySpan<byte> subject, in ReadOnlySequence<byte> headers, in ReadOnlySequence<byte> payload);

    /// <summary>
    /// Appends a message as <see cref="Store(ReadOnlySpan{byte}, in ReadOnlySequence{byte}, in ReadOnlySequence{byte})"/>
    /// does, with a given store time or time to live (contract 1.4). A store supports what its provider's
    /// <see cref="IStreamStoreProvider.Features"/> says; the engine asks for nothing else.
    /// </summary>
    /// <remarks>
    /// The default implementation, which a store written against contract 1.3 gets, appends at the current time and
    /// refuses a time to live with <see cref="StoreStatus.NotSupported"/>.
    /// </remarks>
    /// <param name="subject">The subject (a literal).</param>
    /// <param name="headers">The NATS header block, or empty.</param>
    /// <param name="payload">The payload.</param>
    /// <param name="options">The store time and time to live.</param>
    /// <returns>The status, sequence and timestamp.</returns>
    StoreResult Store(ReadOnlySpan<byte> subject, in ReadOnlySequence<byte> headers, in ReadOnlySequence<byte> payload, in StoreOptions options) =>
        options.TimeToLive == TimeSpan.Zero
            ? Store(subject, headers, payload)
            : new StoreResult(StoreStatus.NotSupported, 0, 0);

    /// <summary>
    /// Uses up the next sequence without storing a message (nats-server <c>SkipMsg</c>: a publish to an interest-based
    /// stream nobody is interested in still gets a sequence).
    /// </summary>
    /// <returns>The sequence skipped.</returns>
    ulong Skip();

    /// <summary>
    /// Completes when the message with <paramref name="sequence"/> and every earlier one are durable under the
    /// store's policy (at once when <see cref="DurableSequence"/> is already there). Waiting does not block a thread;
    /// many waits may share one underlying task.
    /// </summary>
    /// <param name="sequence">The sequence to wait for.</param>
    /// <param name="cancellationToken">Cancels the wait (not the write).</param>
    /// <returns>A task that completes when durable, or faults when the medium failed.</returns>
    ValueTask WaitForDurableAsync(ulong sequence, CancellationToken cancellationToken = default);

    /// <summary>Makes every change so far durable (appends, removals, purges, configuration) and completes then.</summary>
    /// <param name="cancellationToken">Cancels the wait.</param>
    /// <returns>A task that completes when durable.</returns>
    ValueTask FlushAsync(CancellationToken cancellationToken = default);

    /// <summary>Copies the message with <paramref name="sequence"/> into <paramref name="message"/>.</summary>
    /// <param name="sequence">The stream sequence.</param>
    /// <param name="message">Receives the message; untouched unless <see cref="LoadStatus.Found"/>.</param>
    /// <returns><see cref="LoadStatus.Found"/>, <see cref="LoadStatus.NotFound"/> (deleted), or <see cref="LoadStatus.EndOfStream"/> (past the last sequence).</returns>
    LoadStatus Load(ulong sequence, StoredMessage message);

    /// <summary>
    /// Copies the first message at or after <paramref name="start"/> whose subject matches <paramref name="filter"/>
    /// into <paramref name="message"/> (nats-server <c>LoadNextMsg</c>).
    /// </summary>
    /// <param name="filter">The filter; empty or <c>&gt;</c> for every subject.</param>
    /// <param name="start">The first sequence to consider (raised to the first stored).</param>
    /// <param name="message">Receives the message.</param>
    /// <param name="scanned">
    /// The sequence found, or when none matches the last sequence considered (the stream's last), so a caller can
    /// resume after it.
    /// </param>
    /// <returns><see cref="LoadStatus.Found"/>, or <see cref="LoadStatus.EndOfStream"/> when nothing matches up to the end.</returns>
    LoadStatus LoadNext(ReadOnlySpan<byte> filter, ulong start, StoredMessage message, out ulong scanned);

    /// <summary>Copies the last message whose subject matches <paramref name="filter"/> (nats-server <c>LoadLastMsg</c>).</summary>
    /// <param name="filter">A subject or filter; empty or <c>&gt;</c> for the stream's last message.</param>
    /// <param name="message">Receives the message.</param>
    /// <returns><see cref="LoadStatus.Found"/> or <see cref="LoadStatus.NotFound"/>.</returns>
    LoadStatus LoadLast(ReadOnlySpan<byte> filter, StoredMessage message);

    /// <summary>
    /// Removes one message; with <paramref name="secureErase"/> its bytes are also overwritten so they cannot be
    /// recovered (nats-server <c>EraseMsg</c>, the default of the message-delete API).
    /// </summary>
    /// <param name="sequence">The stream sequence.</param>
    /// <param name="secureErase">Overwrite the message's bytes too.</param>
    /// <returns>Whether it was stored and is now removed.</returns>
    bool Remove(ulong sequence, bool secureErase = false);

    /// <summary>Removes every message; the next append continues the sequence.</summary>
    /// <returns>How many messages were removed.</returns>
    ulong Purge();

    /// <summary>
    /// Removes messages matching <paramref name="subject"/> (nats-server <c>PurgeEx</c>): all of them, only those below
    /// <paramref name="sequence"/> when it is not 0, or all but the newest <paramref name="keep"/> when it is not 0.
    /// </summary>
    /// <param name="subject">A subject or filter; empty for every subject.</param>
    /// <param name="sequence">Purge up to but not including this sequence; 0 for no bound.</param>
    /// <param name="keep">How many of the newest matching messages to keep; 0 to keep none.</param>
    /// <returns>How many messages were removed.</returns>
    ulong Purge(string subject, ulong sequence, ulong keep);

    /// <summary>Removes every message below <paramref name="sequence"/>; the first sequence becomes at least <paramref name="sequence"/>.</summary>
    /// <param name="sequence">The new lowest sequence; 0 purges everything.</param>
    /// <returns>How many messages were removed.</returns>
    ulong Compact(ulong sequence);

    /// <summary>Removes every message above <paramref name="sequence"/> and makes it the last sequence; 0 resets the store.</summary>
    /// <param name="sequence">The new last sequence.</param>
    void Truncate(ulong sequence);

    /// <summary>The first sequence whose timestamp is at or after <paramref name="timestamp"/> (last + 1 when none).</summary>
    /// <param name="timestamp">Nanoseconds since the Unix epoch.</param>
    /// <returns>The sequence.</returns>
    ulong GetSequenceFromTime(long timestamp);

    /// <summary>The current counters (cheap: no lists are built).</summary>
    /// <returns>The state.</returns>
    StreamState GetState();

    /// <summary>The interior deleted sequences, ascending (for stream info with <c>deleted_details</c>).</summary>
    /// <returns>A new list.</returns>
    IReadOnlyList<ulong> GetDeletedSequences();

    /// <summary>Messages matching <paramref name="filter"/> at or after <paramref name="start"/> (nats-server <c>FilteredState</c>).</summary>
    /// <param name="start">The first sequence to count.</param>
    /// <param name="filter">The filter; empty for every subject.</param>
    /// <returns>The count and the first and last matching sequences.</returns>
    SubjectState GetFilteredState(ulong start, ReadOnlySpan<byte> filter);

    /// <summary>The state of every subject matching <paramref name="filter"/> (nats-server <c>SubjectsState</c>).</summary>
    /// <param name="filter">The filter; empty for every subject.</param>
    /// <returns>A new dictionary, subject to state.</returns>
    IReadOnlyDictionary<string, SubjectState> GetSubjectsState(string filter);

    /// <summary>
    /// How many messages at or after <paramref name="start"/> match <paramref name="filter"/>; with
    /// <paramref name="lastPerSubject"/> only each subject's last counts (nats-server <c>NumPending</c>).
    /// </summary>
    /// <param name="start">The first sequence to count.</param>
    /// <param name="filter">The filter; empty for every subject.</param>
    /// <param name="lastPerSubject">Count subjects instead of messages.</param>
    /// <returns>The count and the sequence it is valid through.</returns>
    PendingCount NumPending(ulong start, ReadOnlySpan<byte> filter, bool lastPerSubject);

    /// <summary>Applies a new configuration: new limits are enforced at once, the metadata is replaced.</summary>
    /// <param name="config">The configuration.</param>
    void UpdateConfig(StreamStoreConfig config);

    /// <summary>Sets the one handler told about changes (see <see cref="StorageUpdateHandler"/>); <see langword="null"/> removes it.</summary>
    /// <param name="handler">The handler.</param>
    void RegisterStorageUpdates(StorageUpdateHandler? handler);

    /// <summary>
    /// Sets the one handler told when an expiry emptied a subject (see <see cref="SubjectExpiredHandler"/>; contract
    /// 1.4, for stores whose provider declares <see cref="StoreFeatures.SubjectExpiries"/>); <see langword="null"/>
    /// removes it. A store keeps nothing for the handler while none is set.
    /// </summary>
    /// <remarks>The default implementation, which a store written against contract 1.3 gets, never calls it.</remarks>
    /// <param name="handler">The handler.</param>
    void RegisterSubjectExpiries(SubjectExpiredHandler? handler)
    {
    }

    /// <summary>
    /// Opens the state store of a consumer of this stream: the existing one when a consumer of that name was
    /// recovered or created before (its <see cref="IConsumerStore.Config"/> is then replaced), a new empty one otherwise.
    /// </summary>
    /// <param name="config">The consumer's configuration.</param>
    /// <returns>The store; the stream store disposes it with itself.</returns>
    IConsumerStore OpenConsumerStore(ConsumerStoreConfig config);

    /// <summary>The consumer stores this stream holds (those recovered at startup, then those opened since).</summary>
    IReadOnlyList<IConsumerStore> ConsumerStores { get; }

    /// <summary>Deletes the stream's data and its consumers' state for good, then closes the store.</summary>
    /// <param name="cancellationToken">Cancels waiting for the deletion.</param>
    /// <returns>A task that completes when the data is gone.</returns>
    ValueTask DeleteAsync(CancellationToken cancellationToken = default);
}
