using Broker.Abstractions;

namespace Broker.JetStream.Internal.Consumers;

/// <summary>
/// Redelivery: the queue of messages to send again, in order (nats-server <c>rdq</c>/<c>rdqi</c>), filled by NAKs and
/// by the redelivery timer (nats-server <c>ptmr</c>, <c>checkPending</c>), emptied by the delivery runner, bounded by
/// <c>max_deliver</c>; and what happens to pending deliveries when the stream removes or purges their messages.
/// </summary>
internal sealed partial class AckTracker
{
    // Messages to redeliver, in order, and the same as a set; made with the first redelivery queued (issue 25: an
    // idle consumer holds neither, 96 B).
    private List<ulong>? redeliverQueue;
    private HashSet<ulong>? redeliverSet;
    private readonly IConsumerTimers timers;
    private Timer? pendingTimer;
    private bool pendingTimerArmed;
    private bool stopped;

    /// <summary>Messages queued for redelivery.</summary>
    public int RedeliverQueueCount => redeliverQueue?.Count ?? 0;

    private List<ulong> RedeliverQueue => redeliverQueue ??= [];

    private HashSet<ulong> RedeliverSet => redeliverSet ??= [];

    /// <summary>Arms the redelivery timer for what the store brought back pending (the consumer starts).</summary>
    public void Start()
    {
        if (Count > 0)
        {
            SchedulePendingCheck(AckWait);
        }
    }

    /// <summary>Stops the redelivery timer for good (the consumer stops).</summary>
    public void Stop()
    {
        stopped = true;
        pendingTimer?.Dispose();
    }

    /// <summary>
    /// Loads the next message to redeliver into <paramref name="message"/> and counts the redelivery; returns its
    /// delivery count, 0 when nothing is to be redelivered. A message past <c>max_deliver</c> is dropped from pending
    /// with a <c>MAX_DELIVERIES</c> advisory; one gone from the stream is forgotten.
    /// </summary>
    public ulong NextRedelivery(IStreamStore streamStore, StoredMessage message)
    {
        while (redeliverQueue is { Count: > 0 } queue)
        {
            var sequence = queue[0];
            queue.RemoveAt(0);
            redeliverSet!.Remove(sequence);
            var count = Redeliveries[sequence] = Redeliveries.GetValueOrDefault(sequence) + 1;
            var deliveryCount = count + 1;
            if (config.MaxDeliver > 0 && deliveryCount > (ulong)config.MaxDeliver)
            {
                if (deliveryCount == (ulong)config.MaxDeliver + 1)
                {
                    timers.Events.MaxDeliveries(sequence, deliveryCount - 1);
                }

                Pending.Remove(sequence);
                continue;
            }

            if (streamStore.Load(sequence, message) == LoadStatus.Found)
            {
                return deliveryCount;
            }

            // Gone from the stream meanwhile: nothing to redeliver.
            Pending.Remove(sequence);
            Redeliveries.Remove(sequence);
        }

        return 0;
    }

    /// <summary>Puts back at the head of the queue a redelivery taken by <see cref="NextRedelivery"/> but not sent.</summary>
    public void Requeue(ulong sequence, ulong deliveryCount)
    {
        Redeliveries[sequence] = deliveryCount - 2;
        if (Redeliveries[sequence] == 0)
        {
            Redeliveries.Remove(sequence);
        }

        RedeliverQueue.Insert(0, sequence);
        RedeliverSet.Add(sequence);
    }

    /// <summary>Queues every pending delivery for redelivery, in stream order (the deliver subject changed).</summary>
    public void RedeliverAll()
    {
        foreach (var sequence in Pending.Keys.Order())
        {
            if (RedeliverSet.Add(sequence))
            {
                RedeliverQueue.Add(sequence);
            }
        }
    }

    /// <summary>Arms the redelivery check to fire after <paramref name="nanoseconds"/>.</summary>
    public void SchedulePendingCheck(long nanoseconds)
    {
        if (stopped)
        {
            return;
        }

        pendingTimer ??= new Timer(static state => ((IConsumerTimers)state!).OnPendingDue(), timers, Timeout.Infinite, Timeout.Infinite);
        pendingTimer.Change(TimeSpan.FromTicks(Math.Max(nanoseconds / 100, 10_000) + 10_000), Timeout.InfiniteTimeSpan);
        pendingTimerArmed = true;
    }

    /// <summary>
    /// The redelivery timer fired (nats-server <c>checkPending</c>): queues deliveries whose ack wait (or backoff step)
    /// expired, forgets those whose message left the stream (below <paramref name="firstSequence"/>), and re-arms for
    /// the next. Returns whether something was queued or forgotten (delivery should run).
    /// </summary>
    public bool CheckPending(long now, ulong firstSequence)
    {
        pendingTimerArmed = false;
        if (stopped || Count == 0)
        {
            return false;
        }

        var kick = false;
        var ackWait = AckWait;
        var backoff = config.BackOff;
        var next = backoff is { Count: > 0 } ? backoff[^1] : ackWait;
        List<ulong>? expired = null;
        foreach (var (sequence, delivery) in Pending)
        {
            if (sequence < firstSequence)
            {
                // Gone from the stream: nothing to wait for.
                (expired ??= []).Add(sequence | (1UL << 63));
                continue;
            }

            var deadline = ackWait;
            if (backoff is { Count: > 0 })
            {
                var count = BackoffStep(sequence, backoff.Count);
                deadline = backoff[count];
                var following = backoff[Math.Min(count + 1, backoff.Count - 1)];
                next = Math.Min(next, following);
            }

            var elapsed = now - delivery.Timestamp;
            if (elapsed >= deadline)
            {
                if (redeliverSet?.Contains(sequence) != true)
                {
                    (expired ??= []).Add(sequence);
                }
            }
            else
            {
                next = Math.Min(next, deadline - elapsed);
            }
        }

        if (expired is not null)
        {
            expired.Sort();
            foreach (var entry in expired)
            {
                if ((entry & (1UL << 63)) != 0)
                {
                    var gone = entry & ~(1UL << 63);
                    Pending.Remove(gone);
                    Redeliveries.Remove(gone);
                    continue;
                }

                RedeliverSet.Add(entry);
                RedeliverQueue.Add(entry);
                Pending[entry] = Pending[entry] with { Timestamp = now };
            }

            kick = true;
        }

        if (Count > 0)
        {
            SchedulePendingCheck(next);
        }

        return kick;
    }

    /// <summary>
    /// When the last pending delivery's ack wait (or backoff step) runs out (ns since the Unix epoch), 0 with none
    /// pending: nats-server 2.11.7+ <c>deleteNotActive</c> keeps a pull consumer whose client may still be working on a
    /// message until then plus the inactive threshold.
    /// </summary>
    public long LastAckDeadline()
    {
        if (Count == 0)
        {
            return 0;
        }

        long last = 0;
        var backoff = config.BackOff;
        foreach (var (sequence, delivery) in Pending)
        {
            var wait = backoff is { Count: > 0 } ? backoff[BackoffStep(sequence, backoff.Count)] : AckWait;
            last = Math.Max(last, delivery.Timestamp + wait);
        }

        return last;
    }

    // The backoff step a delivery of sequence waits: its redeliveries so far, the last step once past the list.
    private int BackoffStep(ulong sequence, int steps) => (int)Math.Min(Redeliveries.GetValueOrDefault(sequence), (ulong)steps - 1);

    /// <summary>The stream removed <paramref name="sequence"/> (limits, age, a delete): a delivery pending for it is done.</summary>
    /// <param name="sequence">The removed stream sequence.</param>
    /// <param name="delivered">The last consumer and stream sequences delivered (the floor when nothing is left pending).</param>
    public void OnRemoved(ulong sequence, SequencePair delivered)
    {
        if (Pending.Remove(sequence, out var delivery))
        {
            Redeliveries.Remove(sequence);
            RemoveFromRedeliverQueue(sequence);
            if (Pending.Count == 0)
            {
                floorConsumer = delivered.Consumer;
                floorStream = delivered.Stream;
            }

            store.UpdateAcks(delivery.ConsumerSequence, sequence);
        }
    }

    /// <summary>
    /// The stream was purged below <paramref name="first"/> (nats-server <c>consumer.purge</c>): the floor moves up to
    /// it, pending deliveries are forgotten, and the whole state is stored.
    /// </summary>
    /// <param name="first">The stream's first sequence after the purge.</param>
    /// <param name="delivered">The last consumer and stream sequences delivered, after the position skipped the purged messages.</param>
    public void OnPurged(ulong first, SequencePair delivered)
    {
        if (floorStream < first)
        {
            floorStream = first - 1;
            floorConsumer = delivered.Consumer;
        }

        var next = delivered.Stream + 1;
        pending?.Clear();
        redeliverQueue?.RemoveAll(s => s < next);
        redeliverSet?.RemoveWhere(s => s < next);
        var state = new ConsumerState
        {
            Delivered = delivered,
            AckFloor = new SequencePair(floorConsumer, floorStream),
        };
        if (redeliveries is not null)
        {
            foreach (var (sequence, count) in redeliveries)
            {
                state.Redelivered[sequence] = count;
            }
        }

        store.Update(state);
    }

    private void RemoveFromRedeliverQueue(ulong sequence)
    {
        if (redeliverSet?.Remove(sequence) == true)
        {
            redeliverQueue!.Remove(sequence);
        }
    }
}
