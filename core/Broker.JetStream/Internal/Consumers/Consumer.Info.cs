using Broker.JetStream.Internal.Json;
using Broker.JetStream.Internal.Models;

namespace Broker.JetStream.Internal.Consumers;

/// <summary>Consumer info (nats-server <c>infoWithSnap</c>) and configuration updates.</summary>
internal sealed partial class Consumer
{
    public ConsumerInfoModel Info()
    {
        lock (gate)
        {
            return InfoLocked();
        }
    }

    /// <summary>The info under the lock (the create response's snapshot is taken with <see cref="StartWithInfo"/>).</summary>
    private ConsumerInfoModel InfoLocked()
    {
        var now = GoTime.NowNanoseconds();
        pull?.Expire(now, cursor.Delivered);
        var paused = side?.Pause?.Remaining(now) ?? 0;
        return new ConsumerInfoModel
        {
            Stream = stream.Name,
            Name = Name,
            Created = Created,
            Config = config.Clone(),
            Delivered = cursor.DeliveredInfo,
            AckFloor = acks.FloorInfo,
            NumAckPending = acks.Count,
            NumRedelivered = acks.RedeliveredCount,
            NumWaiting = pull?.Count ?? 0,
            NumPending = cursor.NumPending(),
            PushBound = push is not null && push.IsBound(),
            Paused = paused > 0,
            PauseRemaining = paused,
            PriorityGroups = side?.Priority?.Info(),
        };
    }

    /// <summary>
    /// Applies a new configuration to a running consumer (validated by <c>ConsumerValidation.CheckUpdate</c>): limits,
    /// ack wait, deliver subject, rate limit, description, metadata, inactivity threshold, headers only, pause.
    /// </summary>
    public void UpdateConfig(ConsumerConfig updated)
    {
        lock (gate)
        {
            var deliverChanged = updated.DeliverSubject != config.DeliverSubject;
            var rateChanged = updated.RateLimit != config.RateLimit;
            config = updated;
            acks.Configure(updated);
            pull?.Configure(updated);
            if (format is not null)
            {
                format.HeadersOnly = updated.HeadersOnly;
            }

            ConfigureSideParts(updated);
            push?.Configure(updated, cursor.LastDelivered, side?.Inactivity is { Threshold: > 0 });
            if (side?.Pause is not null || updated.PauseUntil is not null)
            {
                Pause.Change(updated.PauseUntil);
            }

            if (rateChanged && (side?.Pacer is not null || updated.RateLimit > 0))
            {
                (Side.Pacer ??= new DeliveryPacer(Kick)).SetRateLimit(updated.RateLimit, updated.IsPush, stream.Config.MaxMsgSize);
            }

            if (deliverChanged && push is not null)
            {
                push.Retarget(updated.DeliverSubjectUtf8!);

                // Pending deliveries went to the old subject: send them again to the new one.
                acks.RedeliverAll();
            }

            cursor.SetFilters(updated);
            Store.UpdateConfig(StoredConsumerMetadata.StoreConfig(Name, updated, Created));
            side?.Inactivity?.Schedule();
            if (acks.Count > 0)
            {
                acks.SchedulePendingCheck(Math.Min(acks.AckWait, 100_000_000));
            }
        }

        Kick();
    }
}
