namespace Broker.Abstractions;

/// <summary>
/// The persisted state of one consumer, modelled on nats-server's <c>ConsumerStore</c>. The engine keeps the live
/// state itself and writes every change through: deliveries (<see cref="UpdateDelivered"/>) and acknowledgements
/// (<see cref="UpdateAcks"/>). A durable store persists them so a restart resumes the consumer where it was.
/// </summary>
/// <remarks>Every member is thread-safe.</remarks>
public interface IConsumerStore
{
    /// <summary>The consumer's configuration (its <see cref="ConsumerStoreConfig.Metadata"/> survives recovery).</summary>
    ConsumerStoreConfig Config { get; }

    /// <summary>Whether anything was delivered or a starting sequence was set (a recovered consumer resumes from it).</summary>
    bool HasState { get; }

    /// <summary>Sets the stream sequence delivery starts after: delivered and ack floor both become it.</summary>
    /// <param name="streamSequence">The stream sequence before the first to deliver.</param>
    void SetStarting(ulong streamSequence);

    /// <summary>
    /// Records a delivery (nats-server <c>UpdateDelivered</c>): a new pending entry for a first delivery, a new
    /// timestamp and redelivery count for a redelivery; with <see cref="ConsumerAckPolicy.None"/> the ack floor moves
    /// with it.
    /// </summary>
    /// <param name="consumerSequence">The delivery's consumer sequence.</param>
    /// <param name="streamSequence">The message's stream sequence.</param>
    /// <param name="deliveryCount">1 for a first delivery, more for a redelivery.</param>
    /// <param name="timestamp">When it was delivered, ns since the Unix epoch.</param>
    void UpdateDelivered(ulong consumerSequence, ulong streamSequence, ulong deliveryCount, long timestamp);

    /// <summary>
    /// Records an acknowledgement (nats-server <c>UpdateAcks</c>): removes the pending entry and moves the ack floor;
    /// with <see cref="ConsumerAckPolicy.All"/> everything up to the sequence is acknowledged.
    /// </summary>
    /// <param name="consumerSequence">The delivery's consumer sequence.</param>
    /// <param name="streamSequence">The message's stream sequence.</param>
    void UpdateAcks(ulong consumerSequence, ulong streamSequence);

    /// <summary>Replaces the whole state (after a purge of the stream, or a reset).</summary>
    /// <param name="state">The new state; copied.</param>
    void Update(ConsumerState state);

    /// <summary>A copy of the state.</summary>
    /// <returns>A new object the caller owns.</returns>
    ConsumerState GetState();

    /// <summary>Replaces the configuration (and the metadata persisted with it).</summary>
    /// <param name="config">The configuration.</param>
    void UpdateConfig(ConsumerStoreConfig config);

    /// <summary>Makes every change so far durable under the store's policy, and completes then.</summary>
    /// <param name="cancellationToken">Cancels the wait.</param>
    /// <returns>A task that completes when durable (synchronously for a memory store).</returns>
    ValueTask FlushAsync(CancellationToken cancellationToken = default);

    /// <summary>Deletes the consumer's state for good; the stream store forgets it.</summary>
    /// <param name="cancellationToken">Cancels waiting for the deletion.</param>
    /// <returns>A task that completes when the state is gone.</returns>
    ValueTask DeleteAsync(CancellationToken cancellationToken = default);
}
