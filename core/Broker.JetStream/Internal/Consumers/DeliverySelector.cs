using Broker.Abstractions;

namespace Broker.JetStream.Internal.Consumers;

/// <summary>
/// Which message a consumer delivers next (nats-server <c>getNextMsg</c>): a redelivery first, then the next of the
/// last-per-subject list, then the next match at the stream sequence unless <c>max_ack_pending</c> holds it back; or
/// the paced message held until it is due. The message is loaded into one scratch message, the consumer's from its
/// first delivery on; until then a look loads into the thread's probe message, which the consumer keeps when the look
/// finds something. A push consumer looks once when it starts, so without the probe every idle consumer (an MQTT QoS 1
/// subscription's) would hold a scratch message it never used (56 B, issue 25). Guarded by the consumer's lock.
/// </summary>
/// <remarks>
/// A struct held in the consumer's field, given the consumer's cursor, ack tracker and stream store with each call:
/// as an object of its own it held those three references again, 56 B of each idle MQTT QoS 1 consumer (issue 25).
/// Call it through the field (not a copy), so the scratch message and the flag stay the consumer's.
/// </remarks>
internal struct DeliverySelector
{
    // The look that finds a message takes it (the send reads it after the lock is released, so it must be the
    // consumer's own); a look that finds nothing leaves it to the thread's next consumer. No await between the two.
    [ThreadStatic]
    private static StoredMessage? probe;

    private StoredMessage? scratch;

    /// <summary>The message the last successful <see cref="Next"/> or <see cref="TakeHeld"/> loaded.</summary>
    public readonly StoredMessage Message => scratch!;

    /// <summary>Whether max ack pending held the last look for a message back (a no-wait request then keeps waiting).</summary>
    public bool BlockedByAckPending { get; private set; }

    /// <summary>Loads the next message to deliver: its delivery count, 0 when nothing is deliverable.</summary>
    /// <param name="cursor">Where the consumer is in the stream.</param>
    /// <param name="acks">Its pending deliveries and redelivery queue.</param>
    /// <param name="store">The stream's store.</param>
    public ulong Next(StreamCursor cursor, AckTracker acks, IStreamStore store)
    {
        var message = scratch ?? (probe ??= new StoredMessage());
        var deliveryCount = Look(message, cursor, acks, store);
        if (deliveryCount != 0 && scratch is null)
        {
            scratch = message;
            probe = null;
        }

        return deliveryCount;
    }

    private ulong Look(StoredMessage message, StreamCursor cursor, AckTracker acks, IStreamStore store)
    {
        var deliveryCount = acks.NextRedelivery(store, message);
        if (deliveryCount != 0)
        {
            return deliveryCount;
        }

        if (cursor.TryLoadFromSkipList(message))
        {
            return 1;
        }

        BlockedByAckPending = acks.AtMaxAckPending;
        if (BlockedByAckPending)
        {
            return 0;
        }

        return cursor.TryLoadNext(message) ? 1UL : 0UL;
    }

    /// <summary>
    /// Loads the message <paramref name="pacer"/> held (now due): its delivery count, or 0 when it went meanwhile
    /// (removed from the stream, or acknowledged before its redelivery).
    /// </summary>
    public ulong TakeHeld(DeliveryPacer pacer, AckTracker acks, IStreamStore store, out bool replayDone)
    {
        var sequence = pacer.TakeHeld(out var deliveryCount, out replayDone);
        if (deliveryCount > 1 && !acks.IsPending(sequence))
        {
            return 0;
        }

        return store.Load(sequence, scratch ??= new StoredMessage()) == LoadStatus.Found ? deliveryCount : 0;
    }
}
