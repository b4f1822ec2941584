using Broker.JetStream.Internal.Json;
using Broker.JetStream.Internal.Models;

namespace Broker.JetStream.Internal.Consumers;

/// <summary>
/// The inactivity clock (nats-server <c>dthresh</c>, <c>deleteNotActive</c>): an ephemeral consumer (or one with
/// <c>inactive_threshold</c>) is deleted once nobody pulled from it, or listened on its deliver subject, for that long.
/// It checks a quarter of the threshold apart (50 ms at least). Guarded by the consumer's lock.
/// </summary>
/// <param name="created">When the consumer was created (ns since the Unix epoch): a pull consumer nobody ever pulled from counts from there.</param>
/// <param name="push">The push front end (whether someone listens), or null for a pull consumer.</param>
/// <param name="pull">The pull front end (when the last request came), or null for a push consumer.</param>
/// <param name="onDue">Called by the timer, without the lock; the consumer takes its lock and calls <see cref="Check"/>.</param>
/// <param name="acks">A pull consumer's pending deliveries: one is not inactive while a client may still acknowledge one.</param>
internal sealed class InactivityClock(long created, PushDelivery? push, PullRequests? pull, Action onDue, AckTracker? acks = null)
{
    private Timer? timer;
    private long threshold;
    private bool stopped;

    /// <summary>The threshold in force (ns): the configured one, or 5 s for ephemerals (nats-server JsDeleteWaitTimeDefault); 0 for none.</summary>
    public long Threshold => threshold;

    /// <summary>Takes the threshold of a configuration (creation or update).</summary>
    public void Configure(ConsumerConfig config) => threshold = ThresholdOf(config);

    /// <summary>The threshold of a configuration (ns), 0 for none: a consumer without one needs no clock.</summary>
    public static long ThresholdOf(ConsumerConfig config) =>
        config.InactiveThreshold > 0 ? config.InactiveThreshold : config.IsDurable ? 0 : 5_000_000_000;

    /// <summary>Arms the timer for the next check, when there is a threshold.</summary>
    public void Schedule()
    {
        if (threshold <= 0 || stopped)
        {
            return;
        }

        timer ??= new Timer(static state => ((Action)state!)(), onDue, Timeout.Infinite, Timeout.Infinite);
        timer.Change(TimeSpan.FromTicks(Math.Max(threshold / 100 / 4, TimeSpan.TicksPerMillisecond * 50)), Timeout.InfiniteTimeSpan);
    }

    /// <summary>Whether the consumer was inactive for the threshold at <paramref name="now"/>; if not, the next check is armed.</summary>
    public bool Check(long now)
    {
        bool inactive;
        if (push is not null)
        {
            var inactiveSince = push.CheckInactive(now);
            inactive = inactiveSince != 0 && now - inactiveSince >= threshold;
        }
        else
        {
            var last = Math.Max(pull!.LastRequest, created);
            inactive = pull.Count == 0 && now - last >= threshold;

            // nats-server 2.11.7+: a delivery still awaiting its ack counts as activity until its ack wait ends (the
            // threshold counts from there). Without it an unacknowledged message's client lost the consumer after the
            // threshold, before it could acknowledge, and a request that came after a stall found no consumer.
            if (inactive && acks?.LastAckDeadline() is > 0 and var deadline && now - deadline < threshold)
            {
                inactive = false;
            }

            if (!inactive && pull.Count > 0)
            {
                // Requests waiting count as activity.
                pull.LastRequest = now;
            }
        }

        if (!inactive)
        {
            Schedule();
        }

        return inactive;
    }

    /// <summary>
    /// An acknowledgement of any kind came (nats-server <c>suppressDeletion</c>): a pull consumer's threshold counts from
    /// it, as from a request.
    /// </summary>
    public void OnAcknowledgement()
    {
        if (pull is not null && threshold > 0)
        {
            pull.LastRequest = GoTime.NowNanoseconds();
        }
    }

    /// <summary>Stops the clock for good (the consumer stops).</summary>
    public void Stop()
    {
        stopped = true;
        timer?.Dispose();
    }
}
