using System.Text.Json;
using Broker.Abstractions;
using Broker.JetStream.Internal.Json;
using Broker.JetStream.Internal.Models;

namespace Broker.JetStream.Internal.Consumers;

/// <summary>
/// Acknowledgements and redelivery (nats-server <c>processAckMsg</c>, <c>processNak</c>, <c>checkPending</c>): the
/// deliveries awaiting acknowledgement (<c>pending</c>), how often each was redelivered, the ack floor, the queue of
/// messages to redeliver (<c>rdq</c>) and the timer that finds deliveries not acknowledged within <c>ack_wait</c> (or
/// their <c>backoff</c> step), up to <c>max_deliver</c>. Writes what it changes to the consumer's store. Guarded by the
/// consumer's lock: every member is called with it held (the timer calls back through the consumer, which takes it).
/// </summary>
internal sealed partial class AckTracker
{
    private readonly IConsumerStore store;

    // Deliveries awaiting acknowledgement and redelivery counts, by stream sequence. Made with the first delivery (and
    // the first redelivery): an idle consumer (an MQTT QoS 1 subscription's) holds neither.
    private Dictionary<ulong, PendingDelivery>? pending;
    private Dictionary<ulong, ulong>? redeliveries;
    private ConsumerConfig config;

    // The ack floor (nats-server adflr, asflr): everything at or below it is acknowledged.
    private ulong floorConsumer;
    private ulong floorStream;

    /// <param name="config">The consumer's configuration (ack policy, ack wait, backoff, max deliver, max ack pending, sample frequency).</param>
    /// <param name="store">The consumer's store, told every change of delivered and acknowledged state.</param>
    /// <param name="timers">Called by the redelivery timer, without the lock; the consumer takes its lock and calls <see cref="CheckPending"/>. Its <see cref="IConsumerTimers.Events"/> take advisories and ack metrics.</param>
    public AckTracker(ConsumerConfig config, IConsumerStore store, IConsumerTimers timers)
    {
        this.config = config;
        this.store = store;
        this.timers = timers;
    }

    private Dictionary<ulong, PendingDelivery> Pending => pending ??= [];

    private Dictionary<ulong, ulong> Redeliveries => redeliveries ??= [];

    /// <summary>Deliveries awaiting acknowledgement (<c>num_ack_pending</c>).</summary>
    public int Count => pending?.Count ?? 0;

    /// <summary>Messages delivered more than once and not yet acknowledged (<c>num_redelivered</c>).</summary>
    public int RedeliveredCount => redeliveries?.Count ?? 0;

    /// <summary>The ack floor: the last consumer and stream sequences below which everything is acknowledged.</summary>
    public SequencePair Floor => new(floorConsumer, floorStream);

    /// <summary>When the last acknowledgement arrived (ns since the Unix epoch), 0 for never.</summary>
    public long LastAcknowledged { get; private set; }

    /// <summary>The ack floor and the last acknowledgement's time as consumer info reports them (<c>ack_floor</c>).</summary>
    public SequenceInfo FloorInfo => new() { Consumer = floorConsumer, Stream = floorStream, LastActive = LastAcknowledged == 0 ? null : LastAcknowledged };

    /// <summary>Whether <c>max_ack_pending</c> holds new deliveries back.</summary>
    public bool AtMaxAckPending => config.MaxAckPending > 0 && Count >= config.MaxAckPending;

    /// <summary>How long a delivery waits for its acknowledgement (ns): <c>ack_wait</c>, 30 s by default.</summary>
    public long AckWait => config.AckWait > 0 ? config.AckWait : 30_000_000_000;

    /// <summary>Takes a new configuration (a consumer update).</summary>
    public void Configure(ConsumerConfig updated) => config = updated;

    /// <summary>A new consumer starts after <paramref name="streamFloor"/>: nothing pending, the floor just below the start.</summary>
    public void StartAt(ulong streamFloor)
    {
        floorConsumer = 0;
        floorStream = streamFloor;
        store.SetStarting(streamFloor);
    }

    /// <summary>Resumes from a stored state (nats-server <c>applyState</c>): ack floor, pending deliveries, redelivery counts.</summary>
    public void Restore(ConsumerState state)
    {
        floorConsumer = state.AckFloor.Consumer;
        floorStream = state.AckFloor.Stream;
        foreach (var (sequence, delivery) in state.Pending)
        {
            Pending[sequence] = delivery;
        }

        foreach (var (sequence, count) in state.Redelivered)
        {
            Redeliveries[sequence] = count;
        }
    }

    /// <summary>Records a delivery: a pending entry awaiting its ack (or, for ack none, the floor moves), and the store.</summary>
    public void OnDelivered(ulong sequence, ulong consumerSequence, ulong deliveryCount, long now)
    {
        if (config.AckPolicy == ConsumerAckPolicy.None)
        {
            floorConsumer = consumerSequence;
            floorStream = sequence;
        }
        else
        {
            Pending[sequence] = Pending.TryGetValue(sequence, out var existing)
                ? existing with { Timestamp = now }
                : new PendingDelivery(consumerSequence, now);
            if (pendingTimer is null || !pendingTimerArmed)
            {
                SchedulePendingCheck(AckWait);
            }
        }

        store.UpdateDelivered(consumerSequence, sequence, deliveryCount, now);
    }

    /// <summary>
    /// nats-server <c>processAckMsg</c>: removes what is acknowledged (into <paramref name="acknowledged"/>) and moves the
    /// ack floor; a positive ack (not a term) passes the delivery count so it may be sampled (<c>sample_freq</c>).
    /// </summary>
    /// <param name="streamSeq">The acknowledged stream sequence.</param>
    /// <param name="consumerSeq">The acknowledged consumer sequence.</param>
    /// <param name="sampleDeliveries">The delivery count of a positive ack, 0 for one never sampled.</param>
    /// <param name="delivered">The last consumer and stream sequences delivered.</param>
    /// <param name="acknowledged">Receives the stream sequences now acknowledged.</param>
    /// <returns>Whether delivery should run: room was freed under <c>max_ack_pending</c>, or a metric was queued.</returns>
    public bool Acknowledge(ulong streamSeq, ulong consumerSeq, ulong sampleDeliveries, SequencePair delivered, List<ulong> acknowledged)
    {
        var wasFull = false;
        var sampled = false;
        switch (config.AckPolicy)
        {
            case ConsumerAckPolicy.Explicit:
                if (Pending.Remove(streamSeq, out var delivery))
                {
                    sampled = sampleDeliveries != 0 && timers.Events.SampleAck(config.SampleFrequency, streamSeq, consumerSeq, sampleDeliveries, delivery.Timestamp);

                    wasFull = config.MaxAckPending > 0 && Pending.Count + 1 >= config.MaxAckPending;
                    consumerSeq = delivery.ConsumerSequence;
                    acknowledged.Add(streamSeq);
                }

                if (Pending.Count == 0)
                {
                    floorConsumer = delivered.Consumer;
                    floorStream = delivered.Stream;
                }
                else if (consumerSeq == floorConsumer + 1)
                {
                    floorConsumer = consumerSeq;
                    floorStream = streamSeq;
                    for (var next = streamSeq + 1; next <= delivered.Stream; next++)
                    {
                        if (Pending.TryGetValue(next, out var later))
                        {
                            floorConsumer = later.ConsumerSequence - 1;
                            floorStream = next - 1;
                            break;
                        }
                    }
                }

                Redeliveries.Remove(streamSeq);
                RemoveFromRedeliverQueue(streamSeq);
                break;
            case ConsumerAckPolicy.All:
                if (consumerSeq <= floorConsumer || streamSeq <= floorStream)
                {
                    return false;
                }

                wasFull = config.MaxAckPending > 0 && Pending.Count >= config.MaxAckPending;
                floorConsumer = consumerSeq;
                floorStream = streamSeq;
                foreach (var sequence in Pending.Keys.Where(s => s <= streamSeq).ToList())
                {
                    Pending.Remove(sequence);
                    Redeliveries.Remove(sequence);
                    RemoveFromRedeliverQueue(sequence);
                    acknowledged.Add(sequence);
                }

                break;
            default:
                return false;
        }

        LastAcknowledged = GoTime.NowNanoseconds();
        store.UpdateAcks(consumerSeq, streamSeq);
        return wasFull || sampled;
    }

    /// <summary>
    /// nats-server <c>processNak</c>: redeliver now, or after the delay in <paramref name="argument"/>
    /// (<c>{"delay":ns}</c> or a Go duration). Ignored (false) for a delivery no longer pending.
    /// </summary>
    /// <param name="streamSeq">The NAKed stream sequence.</param>
    /// <param name="consumerSeq">The NAKed consumer sequence.</param>
    /// <param name="deliveryCount">The delivery count the ack subject carried.</param>
    /// <param name="argument">What followed <c>-NAK</c>, trimmed: empty, or a delay.</param>
    /// <param name="nextDeliverySequence">The consumer sequence the next delivery gets (a NAK beyond it is not ours).</param>
    /// <returns>Whether delivery should run.</returns>
    public bool Nak(ulong streamSeq, ulong consumerSeq, ulong deliveryCount, string argument, ulong nextDeliverySequence)
    {
        if (consumerSeq <= floorConsumer || consumerSeq >= nextDeliverySequence || !Pending.TryGetValue(streamSeq, out var delivery))
        {
            return false;
        }

        timers.Events.Naked(streamSeq, consumerSeq, deliveryCount);
        var delay = argument.Length == 0 ? -1 : ParseNakDelay(argument);
        if (delay >= 0)
        {
            // Due for redelivery when ack_wait would expire "delay" from now.
            RemoveFromRedeliverQueue(streamSeq);
            var due = GoTime.NowNanoseconds() - AckWait + delay;
            Pending[streamSeq] = delivery with { Timestamp = due };
            store.UpdateDelivered(delivery.ConsumerSequence, streamSeq, deliveryCount, due);
            SchedulePendingCheck(Math.Max(delay, 1_000_000));
        }
        else if (RedeliverSet.Add(streamSeq))
        {
            RedeliverQueue.Add(streamSeq);
        }

        return true;
    }

    /// <summary><c>+WPI</c>: the delivery's ack wait starts again.</summary>
    public void Progress(ulong streamSeq)
    {
        if (Pending.TryGetValue(streamSeq, out var delivery))
        {
            var now = GoTime.NowNanoseconds();
            Pending[streamSeq] = delivery with { Timestamp = now };
            store.UpdateDelivered(delivery.ConsumerSequence, streamSeq, Redeliveries.GetValueOrDefault(streamSeq) + 1, now);
            RemoveFromRedeliverQueue(streamSeq);
        }
    }

    /// <summary>Whether <paramref name="sequence"/> was delivered and awaits its acknowledgement.</summary>
    public bool IsPending(ulong sequence) => pending?.ContainsKey(sequence) == true;

    /// <summary>
    /// Whether <paramref name="sequence"/> (a match of the consumer) still needs an acknowledgement (nats-server
    /// <c>needAck</c>), given the next stream sequence the consumer looks at.
    /// </summary>
    public bool NeedsAck(ulong sequence, ulong nextStreamSequence) => config.AckPolicy switch
    {
        ConsumerAckPolicy.Explicit => sequence > floorStream && (sequence >= nextStreamSequence || IsPending(sequence)),
        _ => sequence > floorStream,
    };

    /// <summary>A NAK delay: <c>{"delay":ns}</c> or a Go duration (<c>5s</c>); -1 (and a warning) when malformed.</summary>
    private long ParseNakDelay(string text)
    {
        if (text[0] == '{')
        {
            try
            {
                if (JsonSerializer.Deserialize(text, JetStreamJson.Context.NakOptions) is { } options)
                {
                    return Math.Max(options.Delay, 0);
                }
            }
            catch (JsonException)
            {
            }
        }
        else if (ConfigSyntax.TryParseNanoseconds(text, out var parsed, out _))
        {
            // A negative delay is no delay, as nats-server's processNak takes it.
            return Math.Max(parsed, 0);
        }

        timers.Events.BadNakDelay(text);
        return -1;
    }
}
