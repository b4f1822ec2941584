namespace Broker.Abstractions;

/// <summary>A consumer sequence and the stream sequence it delivered (nats-server's <c>SequencePair</c>).</summary>
/// <param name="Consumer">The consumer (delivery) sequence.</param>
/// <param name="Stream">The stream sequence.</param>
public readonly record struct SequencePair(ulong Consumer, ulong Stream);

/// <summary>A delivery waiting for its acknowledgement (nats-server's <c>Pending</c>).</summary>
/// <param name="ConsumerSequence">The consumer sequence of the first delivery.</param>
/// <param name="Timestamp">When it was last delivered, ns since the Unix epoch.</param>
public readonly record struct PendingDelivery(ulong ConsumerSequence, long Timestamp);

/// <summary>
/// A consumer's durable state (nats-server's <c>ConsumerState</c>): what was delivered, the ack floor below which
/// everything is acknowledged, the deliveries awaiting acknowledgement and the redelivery counts.
/// </summary>
/// <remarks>
/// <see cref="ApplyStarting"/>, <see cref="ApplyDelivered"/> and <see cref="ApplyAck"/> are the transitions of
/// nats-server's consumer stores (<c>UpdateDelivered</c>, <c>UpdateAcks</c>); every <see cref="IConsumerStore"/>
/// applies them so that stores agree on what a sequence of deliveries and acknowledgements leaves behind. The type is
/// not thread-safe: a store calls them under its own lock.
/// </remarks>
public sealed class ConsumerState
{
    /// <summary>The last delivery: consumer and stream sequence.</summary>
    public SequencePair Delivered { get; set; }

    /// <summary>Everything at or below these sequences is acknowledged.</summary>
    public SequencePair AckFloor { get; set; }

    // Made on first use: the state of a consumer that delivered nothing (an idle MQTT QoS 1 subscription's) holds neither.
    private Dictionary<ulong, PendingDelivery>? pending;
    private Dictionary<ulong, ulong>? redelivered;

    /// <summary>Deliveries awaiting acknowledgement, by stream sequence (made by the first read: prefer <see cref="PendingCount"/> to ask whether there are any).</summary>
    public Dictionary<ulong, PendingDelivery> Pending => pending ??= [];

    /// <summary>Messages delivered more than once: stream sequence to the number of redeliveries (deliveries - 1); made by the first read like <see cref="Pending"/>.</summary>
    public Dictionary<ulong, ulong> Redelivered => redelivered ??= [];

    /// <summary>How many deliveries await acknowledgement, without making <see cref="Pending"/>.</summary>
    public int PendingCount => pending?.Count ?? 0;

    /// <summary>How many messages were redelivered, without making <see cref="Redelivered"/>.</summary>
    public int RedeliveredCount => redelivered?.Count ?? 0;

    /// <summary>
    /// Sets the stream sequence delivery starts after (<see cref="IConsumerStore.SetStarting"/>): the delivered and
    /// ack floor stream sequences both become it; the consumer sequences stay.
    /// </summary>
    /// <param name="streamSequence">The stream sequence before the first to deliver.</param>
    public void ApplyStarting(ulong streamSequence)
    {
        Delivered = Delivered with { Stream = streamSequence };
        AckFloor = AckFloor with { Stream = streamSequence };
    }

    /// <summary>
    /// Records a delivery (<see cref="IConsumerStore.UpdateDelivered"/>), as nats-server's stores do: a first delivery
    /// adds a pending entry; a redelivery keeps the entry's original consumer sequence, takes the new time and raises the
    /// redelivery count, and drops the entry once <paramref name="maxDeliver"/> is passed; with
    /// <see cref="ConsumerAckPolicy.None"/> the ack floor moves with the delivered sequences and redeliveries are
    /// ignored. A delivery at or below the ack floor changes nothing.
    /// </summary>
    /// <param name="policy">The consumer's ack policy.</param>
    /// <param name="maxDeliver">The consumer's maximum deliveries, or 0 or less for no limit.</param>
    /// <param name="consumerSequence">The delivery's consumer sequence.</param>
    /// <param name="streamSequence">The message's stream sequence.</param>
    /// <param name="deliveryCount">1 for a first delivery, more for a redelivery.</param>
    /// <param name="timestamp">When it was delivered, ns since the Unix epoch.</param>
    /// <returns><see langword="false"/> when the state did not change.</returns>
    public bool ApplyDelivered(ConsumerAckPolicy policy, int maxDeliver, ulong consumerSequence, ulong streamSequence, ulong deliveryCount, long timestamp)
    {
        if ((deliveryCount != 1 && policy == ConsumerAckPolicy.None) || consumerSequence <= AckFloor.Consumer)
        {
            return false;
        }

        if (policy == ConsumerAckPolicy.None)
        {
            var delivered = Delivered;
            var floor = AckFloor;
            if (consumerSequence > delivered.Consumer)
            {
                delivered = delivered with { Consumer = consumerSequence };
                floor = floor with { Consumer = consumerSequence };
            }

            if (streamSequence > delivered.Stream)
            {
                delivered = delivered with { Stream = streamSequence };
                floor = floor with { Stream = streamSequence };
            }

            Delivered = delivered;
            AckFloor = floor;
            return true;
        }

        if (streamSequence > Delivered.Stream)
        {
            Pending[streamSequence] = new PendingDelivery(consumerSequence, timestamp);
        }
        else if (Pending.TryGetValue(streamSequence, out var delivery))
        {
            // A redelivery: the original consumer sequence stays, only the time moves.
            Pending[streamSequence] = delivery with { Timestamp = timestamp };
        }

        Delivered = new SequencePair(Math.Max(Delivered.Consumer, consumerSequence), Math.Max(Delivered.Stream, streamSequence));
        if (deliveryCount > 1)
        {
            if (maxDeliver > 0 && deliveryCount > (ulong)maxDeliver)
            {
                Pending.Remove(streamSequence);
            }

            if (!Redelivered.TryGetValue(streamSequence, out var count) || count < deliveryCount - 1)
            {
                Redelivered[streamSequence] = deliveryCount - 1;
            }
        }

        return true;
    }

    /// <summary>
    /// Records an acknowledgement (<see cref="IConsumerStore.UpdateAcks"/>), as nats-server's stores do: the pending
    /// entry and its redelivery count go; with <see cref="ConsumerAckPolicy.All"/> everything up to the sequence is
    /// acknowledged; otherwise the ack floor moves up to just below the oldest delivery still pending. Ignored with
    /// <see cref="ConsumerAckPolicy.None"/>.
    /// </summary>
    /// <param name="policy">The consumer's ack policy.</param>
    /// <param name="consumerSequence">The delivery's consumer sequence.</param>
    /// <param name="streamSequence">The message's stream sequence.</param>
    /// <returns><see langword="false"/> when the state did not change.</returns>
    public bool ApplyAck(ConsumerAckPolicy policy, ulong consumerSequence, ulong streamSequence)
    {
        if (policy == ConsumerAckPolicy.None)
        {
            return false;
        }

        var changed = redelivered?.Remove(streamSequence) == true;
        if (consumerSequence <= AckFloor.Consumer || pending?.ContainsKey(streamSequence) != true)
        {
            return changed;
        }

        if (policy == ConsumerAckPolicy.All)
        {
            AckFloor = new SequencePair(consumerSequence, streamSequence);
            List<ulong>? covered = null;
            foreach (var sequence in Pending.Keys)
            {
                if (sequence <= streamSequence)
                {
                    (covered ??= []).Add(sequence);
                }
            }

            foreach (var sequence in covered!)
            {
                Pending.Remove(sequence);
                Redelivered.Remove(sequence);
            }

            return true;
        }

        if (Pending.Remove(streamSequence, out var delivery) && consumerSequence > delivery.ConsumerSequence && delivery.ConsumerSequence > 0)
        {
            consumerSequence = delivery.ConsumerSequence;
        }

        if (Pending.Count == 0)
        {
            AckFloor = Delivered;
        }
        else if (consumerSequence == AckFloor.Consumer + 1)
        {
            AckFloor = new SequencePair(consumerSequence, streamSequence);
            if (Delivered.Consumer > consumerSequence)
            {
                for (var sequence = streamSequence + 1; sequence <= Delivered.Stream; sequence++)
                {
                    if (Pending.TryGetValue(sequence, out var next))
                    {
                        if (next.ConsumerSequence > 0)
                        {
                            AckFloor = new SequencePair(next.ConsumerSequence - 1, sequence - 1);
                        }

                        break;
                    }
                }
            }
        }

        return true;
    }

    /// <summary>Refuses a state whose ack floor is above its delivered sequences, which no store may accept.</summary>
    /// <param name="state">The state to check.</param>
    /// <exception cref="ArgumentException">The ack floor is above the delivered sequences.</exception>
    public static void ThrowIfInconsistent(ConsumerState state)
    {
        ArgumentNullException.ThrowIfNull(state);
        if (state.AckFloor.Consumer > state.Delivered.Consumer || state.AckFloor.Stream > state.Delivered.Stream)
        {
            throw new ArgumentException("The ack floor is above the delivered sequences.", nameof(state));
        }
    }

    /// <summary>A deep copy.</summary>
    /// <returns>The copy.</returns>
    public ConsumerState Clone()
    {
        var copy = new ConsumerState { Delivered = Delivered, AckFloor = AckFloor };
        if (pending is not null)
        {
            foreach (var (sequence, delivery) in pending)
            {
                copy.Pending[sequence] = delivery;
            }
        }

        if (redelivered is not null)
        {
            foreach (var (sequence, count) in redelivered)
            {
                copy.Redelivered[sequence] = count;
            }
        }

        return copy;
    }
}
