using Broker.Abstractions;
using Broker.JetStream.Internal.Json;
using Broker.JetStream.Internal.Models;

namespace Broker.JetStream.Internal.Consumers;

/// <summary>Consumer info (nats-server <c>infoWithSnap</c>), the pending count, and configuration updates.</summary>
internal sealed partial class Consumer
{
    public ConsumerInfoModel Info()
    {
        lock (gate)
        {
            if (waiting is not null)
            {
                ExpireRequests(Json.GoTime.NowNanoseconds());
            }

            return new ConsumerInfoModel
            {
                Stream = stream.Name,
                Name = Name,
                Created = Created,
                Config = config.Clone(),
                Delivered = new SequenceInfo
                {
                    Consumer = deliverySequence - 1,
                    Stream = streamSequence - 1,
                    LastActive = lastDelivered == 0 ? null : lastDelivered,
                },
                AckFloor = new SequenceInfo
                {
                    Consumer = ackFloorConsumer,
                    Stream = ackFloorStream,
                    LastActive = lastAcknowledged == 0 ? null : lastAcknowledged,
                },
                NumAckPending = pending.Count,
                NumRedelivered = redeliveries.Count,
                NumWaiting = waiting?.Count ?? 0,
                NumPending = NumPendingLocked(),
                PushBound = config.IsPush && pushActive,
            };
        }
    }

    /// <summary>
    /// Matching messages at or after the stream sequence not yet delivered (nats-server <c>numPending</c>): computed
    /// from the store once, then kept up to date as messages are stored and delivered. Lock held.
    /// </summary>
    private ulong NumPendingLocked()
    {
        if (pendingCountValid)
        {
            return pendingCount;
        }

        var store = stream.Store;
        ulong total = 0;
        ulong through = 0;
        var lastPerSubject = config.DeliverPolicy == DeliverPolicy.LastPerSubject && skipList is not null;
        if (lastPerSubject)
        {
            total = (ulong)(skipList!.Length - skipIndex);
            through = skipResume;
        }
        else if (filters.Length == 0)
        {
            var count = store.NumPending(streamSequence, default, false);
            total = count.Total;
            through = count.ValidThrough;
        }
        else
        {
            foreach (var filter in filters)
            {
                var count = store.NumPending(streamSequence, filter, false);
                total += count.Total;
                through = Math.Max(through, count.ValidThrough);
            }
        }

        pendingCount = total;
        pendingCountThrough = through;
        pendingCountValid = true;
        return total;
    }

    /// <summary>
    /// Applies a new configuration to a running consumer (validated by <c>ConsumerValidation.CheckUpdate</c>): limits,
    /// ack wait, deliver subject, rate limit, description, metadata, inactivity threshold.
    /// </summary>
    public void UpdateConfig(ConsumerConfig updated)
    {
        lock (gate)
        {
            var deliverChanged = updated.DeliverSubject != config.DeliverSubject;
            var rateChanged = updated.RateLimit != config.RateLimit;
            config = updated;
            if (rateChanged)
            {
                SetRateLimit(updated.RateLimit);
            }

            if (waiting is not null)
            {
                waiting.Capacity = updated.MaxWaiting;
            }

            if (deliverChanged && updated.IsPush)
            {
                deliverSubject = System.Text.Encoding.UTF8.GetBytes(updated.DeliverSubject!);
                pushActive = HasDeliveryInterest();

                // Pending deliveries went to the old subject: send them again to the new one.
                foreach (var sequence in pending.Keys.Order())
                {
                    if (redeliverSet.Add(sequence))
                    {
                        redeliverQueue.Add(sequence);
                    }
                }
            }

            SetFilters(updated);
            Store.UpdateConfig(StoreConfig(Name, updated, Created));
            ScheduleInactivityCheck();
            if (pending.Count > 0)
            {
                SchedulePendingCheck(Math.Min(AckWait, 100_000_000));
            }
        }

        Kick();
    }
}
