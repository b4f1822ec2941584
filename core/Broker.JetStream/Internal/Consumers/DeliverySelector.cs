using Broker.Abstractions;

namespace Broker.JetStream.Internal.Consumers;

/// <summary>
/// Which message a consumer delivers next (nats-server <c>getNextMsg</c>): a redelivery first, then the next of the
/// last-per-subject list, then the next match at the stream sequence unless <c>max_ack_pending</c> holds it back; or
/// the paced message held until it is due. The message is loaded into one scratch message, made with the first look
/// (an idle consumer, an MQTT QoS 1 subscription's, holds none). Guarded by the consumer's lock.
/// </summary>
/// <param name="cursor">Where the consumer is in the stream.</param>
/// <param name="acks">Its pending deliveries and redelivery queue.</param>
/// <param name="store">The stream's store.</param>
internal sealed class DeliverySelector(StreamCursor cursor, AckTracker acks, IStreamStore store)
{
    private StoredMessage? scratch;

    /// <summary>The message the last successful <see cref="Next"/> or <see cref="TakeHeld"/> loaded.</summary>
    public StoredMessage Message => scratch!;

    /// <summary>Whether max ack pending held the last look for a message back (a no-wait request then keeps waiting).</summary>
    public bool BlockedByAckPending { get; private set; }

    /// <summary>Loads the next message to deliver: its delivery count, 0 when nothing is deliverable.</summary>
    public ulong Next()
    {
        var message = scratch ??= new StoredMessage();
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
    public ulong TakeHeld(DeliveryPacer pacer, out bool replayDone)
    {
        var sequence = pacer.TakeHeld(out var deliveryCount, out replayDone);
        if (deliveryCount > 1 && !acks.IsPending(sequence))
        {
            return 0;
        }

        return store.Load(sequence, scratch ??= new StoredMessage()) == LoadStatus.Found ? deliveryCount : 0;
    }
}
