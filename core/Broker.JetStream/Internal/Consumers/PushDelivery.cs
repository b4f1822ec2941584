using System.Text;
using Broker.Abstractions;
using Broker.JetStream.Internal.Json;
using Broker.JetStream.Internal.Models;

namespace Broker.JetStream.Internal.Consumers;

/// <summary>
/// The push front end: messages go to <c>deliver_subject</c> (to one member of <c>deliver_group</c>) only while someone
/// subscribes to it (nats-server's interest tracking, here a check of the subject index when delivering and a poll
/// while nobody listens); <c>idle_heartbeat</c> sends <c>100 Idle Heartbeat</c> when idle; <c>flow_control</c> pauses
/// delivery at the buffered-bytes limit until the client answers a <c>100 FlowControl Request</c>
/// (nats-server <c>needFlowControl</c>, <c>processFlowControl</c>). Guarded by the consumer's lock.
/// </summary>
internal sealed class PushDelivery
{
    // nats-server JsFlowControlMaxPending: the most bytes in flight; the window starts at a sixteenth and doubles.
    private const long FlowControlMaxPending = 32 * 1024 * 1024;

    // The consumer: its names (flow-control subjects), interest check, outbox and timer callback are read through it,
    // not held (32 B of each idle MQTT QoS 1 consumer, issue 25).
    private readonly IConsumerTimers owner;
    private long heartbeat;
    private byte[] deliverSubject = [];
    private bool active;
    private long inactiveSince;
    // Made when the consumer starts with flow control: one without (an MQTT QoS 1 subscription's) holds none of its
    // four fields (32 B, issue 25).
    private FlowControlWindow? window;
    private Timer? pushTimer;
    private bool stopped;

    // Whether the timer also watches for the subscriber leaving while one listens (an inactivity threshold counts
    // from then); without it and without idle heartbeats, an idle consumer with a subscriber holds no timer.
    private bool watchWhileActive;
    private bool started;

    /// <param name="owner">
    /// The consumer: its names, its interest check (none: someone always listens), its outbox (heartbeats, flow-control
    /// requests), and its push timer callback, called without the lock (the consumer takes it and calls <see cref="OnTimer"/>).
    /// </param>
    public PushDelivery(IConsumerTimers owner) => this.owner = owner;

    /// <summary>The deliver subject (UTF-8).</summary>
    public byte[] DeliverSubject => deliverSubject;

    /// <summary>Whether someone listened on the deliver subject when last checked (<c>push_bound</c>).</summary>
    public bool Active => active;

    /// <summary>Since when nobody listens (ns since the Unix epoch), 0 while someone does.</summary>
    public long InactiveSince => inactiveSince;

    /// <summary>The flow-control request the client has not answered yet, if any.</summary>
    public string? PendingFlowControl => window?.Id;

    /// <summary>Sets up push state when the consumer starts, and the push timer.</summary>
    /// <param name="config">The consumer's configuration (deliver subject, flow control, idle heartbeat).</param>
    /// <param name="lastDelivered">When the last delivery went (ns since the Unix epoch).</param>
    /// <param name="watchWhileActive">Whether the consumer has an inactivity threshold (see <see cref="Configure"/>).</param>
    public void Start(ConsumerConfig config, long lastDelivered, bool watchWhileActive)
    {
        heartbeat = config.Heartbeat;
        this.watchWhileActive = watchWhileActive;
        started = true;
        deliverSubject = config.DeliverSubjectUtf8!;
        window = config.FlowControl ? new FlowControlWindow { Window = FlowControlMaxPending / 16 } : null;
        active = HasInterest();
        inactiveSince = active ? 0 : GoTime.NowNanoseconds();
        ScheduleTimer(lastDelivered);
    }

    /// <summary>Takes a new configuration (a consumer update): the idle heartbeat, and whether an inactivity threshold is set.</summary>
    /// <param name="updated">The new configuration.</param>
    /// <param name="lastDeliveredAt">When the last delivery went (ns since the Unix epoch).</param>
    /// <param name="watchWhileActive">
    /// Whether the timer keeps checking for the subscriber while one listens: with an inactivity threshold, the time
    /// without a subscriber counts from when it left, as nats-server's interest tracking sees it.
    /// </param>
    public void Configure(ConsumerConfig updated, long lastDeliveredAt, bool watchWhileActive)
    {
        heartbeat = updated.Heartbeat;
        this.watchWhileActive = watchWhileActive;
        if (started)
        {
            // A heartbeat or threshold set now needs the timer, which may be off.
            ScheduleTimer(lastDeliveredAt);
        }
    }

    /// <summary>The deliver subject changed: deliveries go there from now on, if someone listens there.</summary>
    public void Retarget(byte[] subject)
    {
        deliverSubject = subject;
        active = HasInterest();
        if (!active && started)
        {
            ScheduleTimer(0);
        }
    }

    /// <summary>Whether a delivery may go now: someone listens and the flow-control window has room.</summary>
    public bool CanDeliver()
    {
        if (!HasInterest())
        {
            if (active)
            {
                active = false;
                inactiveSince = GoTime.NowNanoseconds();

                // The timer looks for a subscriber again (it may not be running while one listened).
                ScheduleTimer(0);
            }

            return false;
        }

        if (!active)
        {
            active = true;
            inactiveSince = 0;
        }

        return window is null || window.Bytes <= window.Window;
    }

    /// <summary>Counts the bytes in flight and asks for flow control at half the window (nats-server <c>needFlowControl</c>).</summary>
    public void AfterDelivery(int size)
    {
        if (window is null)
        {
            return;
        }

        window.Bytes += size;
        if (window.Id is null && window.Bytes > window.Window / 2)
        {
            Span<byte> random = stackalloc byte[4];
            Random.Shared.NextBytes(random);
            window.Id = $"$JS.FC.{owner.StreamName}.{owner.Name}.{Convert.ToHexString(random)}";
            window.IdBytes = window.Bytes;
            owner.Outbox.Status(deliverSubject, "NATS/1.0 100 FlowControl Request\r\n\r\n"u8, Encoding.UTF8.GetBytes(window.Id));
        }
    }

    /// <summary>
    /// The client answered on <paramref name="subject"/>: when it is the pending flow-control request, the bytes it
    /// covered are released and the window grows. True when delivery may go on.
    /// </summary>
    public bool OnFlowControl(ReadOnlySpan<byte> subject)
    {
        if (window?.Id is null || !subject.SequenceEqual(Encoding.UTF8.GetBytes(window.Id)))
        {
            return false;
        }

        window.Window = Math.Min(window.Window * 2, FlowControlMaxPending);
        window.Bytes = Math.Max(0, window.Bytes - window.IdBytes);
        window.Id = null;
        window.IdBytes = 0;
        return true;
    }

    /// <summary>
    /// The push timer fired: notes whether someone listens, sends an idle heartbeat when one is due, and arms the
    /// timer again.
    /// </summary>
    /// <param name="now">Now (ns since the Unix epoch).</param>
    /// <param name="lastDeliveredAt">When the last delivery went (ns since the Unix epoch).</param>
    /// <param name="lastDelivered">The last consumer and stream sequences delivered, for the heartbeat.</param>
    public void OnTimer(long now, long lastDeliveredAt, SequencePair lastDelivered)
    {
        var listening = HasInterest();
        if (listening != active)
        {
            active = listening;
            inactiveSince = listening ? 0 : GoTime.NowNanoseconds();
        }

        if (active && heartbeat > 0 && now - lastDeliveredAt >= heartbeat)
        {
            owner.Outbox.Enqueue(new ControlMessage(deliverSubject, null, ConsumerOutbox.IdleHeartbeat(lastDelivered, window?.Id)));
        }

        ScheduleTimer(lastDeliveredAt);
    }

    /// <summary>The inactivity clock's check: since when nobody listens (0 while someone does).</summary>
    public long CheckInactive(long now)
    {
        if (HasInterest())
        {
            active = true;
            inactiveSince = 0;
        }
        else if (inactiveSince == 0)
        {
            inactiveSince = now;
        }

        return inactiveSince;
    }

    /// <summary>Stops the push timer for good (the consumer stops).</summary>
    public void Stop()
    {
        stopped = true;
        pushTimer?.Dispose();
    }

    /// <summary>Whether someone listens on the deliver subject now (<c>push_bound</c>): known, and checked again.</summary>
    public bool IsBound() => active && HasInterest();

    /// <summary>
    /// The push timer: idle heartbeats when due, and while nobody listens, a check for a subscriber every 100 ms
    /// (nats-server is told by its subject index; we ask it). While someone listens and no heartbeat or inactivity
    /// threshold needs it, the timer stays off: each delivery checks the subscriber (<see cref="CanDeliver"/>), which
    /// starts the timer again when it is gone. 10,000 idle MQTT QoS 1 consumers woke 10,000 times a second for nothing.
    /// </summary>
    private void ScheduleTimer(long lastDeliveredAt)
    {
        if (stopped)
        {
            return;
        }

        if (active && heartbeat <= 0 && !watchWhileActive)
        {
            // Not needed while someone listens: the timer (about 140 B) goes, and comes back with the next need.
            pushTimer?.Dispose();
            pushTimer = null;
            return;
        }

        var period = heartbeat > 0 ? TimeSpan.FromTicks(heartbeat / 100) : TimeSpan.FromSeconds(1);
        if (!active && period > TimeSpan.FromMilliseconds(100))
        {
            period = TimeSpan.FromMilliseconds(100);
        }
        else if (active && heartbeat > 0)
        {
            // nats-server restarts its heartbeat timer at each delivery: the heartbeat goes one interval after the last
            // message, not up to two (a client checking for it one interval and a bit later must see it).
            var dueIn = heartbeat - (GoTime.NowNanoseconds() - lastDeliveredAt);
            if (dueIn > 0 && dueIn < heartbeat)
            {
                period = TimeSpan.FromTicks(Math.Max(dueIn / 100, TimeSpan.TicksPerMillisecond));
            }
        }

        pushTimer ??= new Timer(static state => ((IConsumerTimers)state!).OnFrontEndDue(), owner, Timeout.Infinite, Timeout.Infinite);
        pushTimer.Change(period, Timeout.InfiniteTimeSpan);
    }

    private bool HasInterest() => owner.Interest?.HasInterest(deliverSubject) ?? true;

    /// <summary>Flow control's state (nats-server <c>pbytes</c>, <c>maxpb</c>, <c>fcid</c>, <c>fcsz</c>). Guarded by the consumer's lock.</summary>
    private sealed class FlowControlWindow
    {
        /// <summary>Bytes delivered and not yet covered by an answered request.</summary>
        public long Bytes { get; set; }

        /// <summary>The window: at most this many bytes in flight.</summary>
        public required long Window { get; set; }

        /// <summary>The request not answered yet (its reply subject), or null.</summary>
        public string? Id { get; set; }

        /// <summary>The bytes in flight when <see cref="Id"/> was sent, released by its answer.</summary>
        public long IdBytes { get; set; }
    }
}
