using System.Text;
using Broker.Abstractions;
using Broker.JetStream.Internal.Json;

namespace Broker.JetStream.Internal.Consumers;

/// <summary>
/// Push delivery: messages go to <c>deliver_subject</c> (to one member of <c>deliver_group</c>) only while someone
/// subscribes to it (nats-server's interest tracking, here a check of the subject index when delivering and a poll
/// while nobody listens); <c>idle_heartbeat</c> sends <c>100 Idle Heartbeat</c> when idle; <c>flow_control</c> pauses
/// delivery at the buffered-bytes limit until the client answers a <c>100 FlowControl Request</c>. Also the inactivity
/// clock that deletes ephemeral consumers nobody uses.
/// </summary>
internal sealed partial class Consumer
{
    // nats-server JsFlowControlMaxPending: the most bytes in flight; the window starts at a sixteenth and doubles.
    private const long FlowControlMaxPending = 32 * 1024 * 1024;

    private byte[] deliverSubject = [];
    private bool pushActive;
    private long pushBytes;
    private long pushWindow;
    private string? flowControlId;
    private long flowControlBytes;
    private Timer? pushTimer;
    private Timer? inactivityTimer;
    private long inactiveSince;

    /// <summary>Sets up push state when the consumer starts. Lock held.</summary>
    private void StartPush()
    {
        if (!config.IsPush)
        {
            return;
        }

        deliverSubject = Encoding.UTF8.GetBytes(config.DeliverSubject!);
        pushWindow = config.FlowControl ? FlowControlMaxPending / 16 : 0;
        pushActive = HasDeliveryInterest();
        inactiveSince = pushActive ? 0 : GoTime.NowNanoseconds();
        SchedulePushTimer();
    }

    private bool HasDeliveryInterest() => engine.Interest?.HasInterest(deliverSubject) ?? true;

    /// <summary>Whether a push delivery may go now: someone listens and the flow-control window has room. Lock held.</summary>
    private bool PushCanDeliver()
    {
        if (!HasDeliveryInterest())
        {
            if (pushActive)
            {
                pushActive = false;
                inactiveSince = GoTime.NowNanoseconds();
            }

            return false;
        }

        if (!pushActive)
        {
            pushActive = true;
            inactiveSince = 0;
        }

        return pushWindow == 0 || pushBytes <= pushWindow;
    }

    /// <summary>Counts the bytes in flight and asks for flow control at half the window (nats-server <c>needFlowControl</c>). Lock held.</summary>
    private void AfterPushDelivery(int size)
    {
        if (pushWindow == 0)
        {
            return;
        }

        pushBytes += size;
        if (flowControlId is null && pushBytes > pushWindow / 2)
        {
            Span<byte> random = stackalloc byte[4];
            Random.Shared.NextBytes(random);
            flowControlId = $"$JS.FC.{stream.Name}.{Name}.{Convert.ToHexString(random)}";
            flowControlBytes = pushBytes;
            outbox.Enqueue(Outgoing.Status(deliverSubject, "NATS/1.0 100 FlowControl Request\r\n\r\n"u8, Encoding.UTF8.GetBytes(flowControlId)));
        }
    }

    /// <summary>The client answered a flow-control request: the bytes it covered are released and the window grows.</summary>
    private void OnFlowControl(in BusMessage message)
    {
        lock (gate)
        {
            if (flowControlId is null || !message.Subject.SequenceEqual(Encoding.UTF8.GetBytes(flowControlId)))
            {
                return;
            }

            pushWindow = Math.Min(pushWindow * 2, FlowControlMaxPending);
            pushBytes = Math.Max(0, pushBytes - flowControlBytes);
            flowControlId = null;
            flowControlBytes = 0;
        }

        Kick();
    }

    /// <summary>
    /// The push timer: idle heartbeats when due, and while nobody listens, a check for a subscriber every 100 ms
    /// (nats-server is told by its subject index; we ask it). Lock held.
    /// </summary>
    private void SchedulePushTimer()
    {
        if (!config.IsPush || closed)
        {
            return;
        }

        var period = config.Heartbeat > 0 ? TimeSpan.FromTicks(config.Heartbeat / 100) : TimeSpan.FromSeconds(1);
        if (!pushActive && period > TimeSpan.FromMilliseconds(100))
        {
            period = TimeSpan.FromMilliseconds(100);
        }
        else if (pushActive && config.Heartbeat > 0)
        {
            // nats-server restarts its heartbeat timer at each delivery: the heartbeat goes one interval after the last
            // message, not up to two (a client checking for it one interval and a bit later must see it).
            var dueIn = config.Heartbeat - (GoTime.NowNanoseconds() - lastDelivered);
            if (dueIn > 0 && dueIn < config.Heartbeat)
            {
                period = TimeSpan.FromTicks(Math.Max(dueIn / 100, TimeSpan.TicksPerMillisecond));
            }
        }

        pushTimer ??= new Timer(static state => ((Consumer)state!).OnPushTimer(), this, Timeout.Infinite, Timeout.Infinite);
        pushTimer.Change(period, Timeout.InfiniteTimeSpan);
    }

    private void OnPushTimer()
    {
        lock (gate)
        {
            if (closed)
            {
                return;
            }

            var interest = HasDeliveryInterest();
            if (interest != pushActive)
            {
                pushActive = interest;
                inactiveSince = interest ? 0 : GoTime.NowNanoseconds();
            }

            var now = GoTime.NowNanoseconds();
            if (pushActive && config.Heartbeat > 0 && now - lastDelivered >= config.Heartbeat)
            {
                outbox.Enqueue(Outgoing.Status(deliverSubject, IdleHeartbeatHeaders(includeStall: true)));
            }

            SchedulePushTimer();
        }

        Kick();
    }

    /// <summary><c>100 Idle Heartbeat</c> with the last consumer and stream sequences (and the stalled flow-control id). Lock held.</summary>
    private byte[] IdleHeartbeatHeaders(bool includeStall)
    {
        var text = new StringBuilder("NATS/1.0 100 Idle Heartbeat\r\nNats-Last-Consumer: ")
            .Append(deliverySequence - 1).Append("\r\nNats-Last-Stream: ").Append(streamSequence - 1).Append("\r\n");
        if (includeStall && flowControlId is not null)
        {
            text.Append("Nats-Consumer-Stalled: ").Append(flowControlId).Append("\r\n");
        }

        return Encoding.ASCII.GetBytes(text.Append("\r\n").ToString());
    }

    /// <summary>
    /// The inactivity clock (nats-server <c>dthresh</c>): an ephemeral consumer (or one with <c>inactive_threshold</c>)
    /// is deleted once nobody pulled from it, or listened on its deliver subject, for that long. Lock held.
    /// </summary>
    private void ScheduleInactivityCheck()
    {
        if (InactiveThreshold <= 0 || closed)
        {
            return;
        }

        inactivityTimer ??= new Timer(static state => _ = ((Consumer)state!).CheckInactivityAsync(), this, Timeout.Infinite, Timeout.Infinite);
        inactivityTimer.Change(TimeSpan.FromTicks(Math.Max(InactiveThreshold / 100 / 4, TimeSpan.TicksPerMillisecond * 50)), Timeout.InfiniteTimeSpan);
    }

    /// <summary>The threshold in force: the configured one, or 5 s for ephemerals (nats-server JsDeleteWaitTimeDefault).</summary>
    private long InactiveThreshold => config.InactiveThreshold > 0 ? config.InactiveThreshold : config.IsDurable ? 0 : 5_000_000_000;

    private async Task CheckInactivityAsync()
    {
        var delete = false;
        lock (gate)
        {
            if (closed)
            {
                return;
            }

            var now = GoTime.NowNanoseconds();
            if (config.IsPush)
            {
                if (HasDeliveryInterest())
                {
                    pushActive = true;
                    inactiveSince = 0;
                }
                else if (inactiveSince == 0)
                {
                    inactiveSince = now;
                }

                delete = inactiveSince != 0 && now - inactiveSince >= InactiveThreshold;
            }
            else
            {
                var last = Math.Max(waiting!.LastRequest, Created);
                delete = waiting.Count == 0 && now - last >= InactiveThreshold;
                if (!delete && waiting.Count > 0)
                {
                    waiting.LastRequest = now;
                }
            }

            if (!delete)
            {
                ScheduleInactivityCheck();
            }
        }

        if (delete)
        {
            JetStreamLog.InactiveDeleted(engine.Logger, stream.Name, Name, TimeSpan.FromTicks(InactiveThreshold / 100));
            await DeleteAsync().ConfigureAwait(false);
        }
    }
}
