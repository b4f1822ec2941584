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
public sealed class ConsumerState
{
    /// <summary>The last delivery: consumer and stream sequence.</summary>
    public SequencePair Delivered { get; set; }

    /// <summary>Everything at or below these sequences is acknowledged.</summary>
    public SequencePair AckFloor { get; set; }

    /// <summary>Deliveries awaiting acknowledgement, by stream sequence.</summary>
    public Dictionary<ulong, PendingDelivery> Pending { get; } = [];

    /// <summary>Messages delivered more than once: stream sequence to the number of redeliveries (deliveries - 1).</summary>
    public Dictionary<ulong, ulong> Redelivered { get; } = [];

    /// <summary>A deep copy.</summary>
    /// <returns>The copy.</returns>
    public ConsumerState Clone()
    {
        var copy = new ConsumerState { Delivered = Delivered, AckFloor = AckFloor };
        foreach (var (sequence, pending) in Pending)
        {
            copy.Pending[sequence] = pending;
        }

        foreach (var (sequence, count) in Redelivered)
        {
            copy.Redelivered[sequence] = count;
        }

        return copy;
    }
}
