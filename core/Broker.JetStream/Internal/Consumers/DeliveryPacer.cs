using System.Diagnostics;
using Broker.Abstractions;

namespace Broker.JetStream.Internal.Consumers;

/// <summary>
/// Pacing of deliveries, as nats-server's <c>loopAndGatherMsgs</c> paces them:
/// <list type="bullet">
/// <item><c>replay_policy: original</c>: from start-up until the consumer has caught up with what the stream held then,
/// each message waits for the gap between its timestamp and the previous message's (gaps of 1 ms or less are not
/// waited for). Once caught up, new messages go out at once.</item>
/// <item><c>rate_limit_bps</c> (push only, refused on pull consumers): a token bucket of <c>bps / 8</c> bytes a second
/// whose burst is the stream's <c>max_msg_size</c>, else the default max payload, starting full (Go's
/// <c>rate.Limiter</c>). A message costs its subject, ack reply, headers and payload, as nats-server counts it.</item>
/// </list>
/// The runner never sleeps: a message that must wait is taken (the stream position moves past it, as in nats-server)
/// and held here; the runner stops and the pace timer kicks it when the message is due. A held message goes out before
/// anything else, to whichever target is there then (a pull request that expired meanwhile does not get it). Guarded by
/// the consumer's lock.
/// </summary>
/// <param name="onDue">Called by the pace timer when a held message is due (the consumer kicks its runner).</param>
internal sealed class DeliveryPacer(Action onDue)
{
    // nats-server's default max_payload: the bucket's burst when the stream sets no max_msg_size. The engine does not
    // see the server's own max_payload, and no message bigger than it can be stored anyway.
    private const long DefaultBurst = 1024 * 1024;

    // nats-server waits only for replay gaps above a millisecond.
    private const long ReplayMinimumGapNanoseconds = 1_000_000;

    // Replay state (nats-server replay, lseq, lts).
    private bool replaying;
    private ulong replayThrough;
    private long lastTimestamp;

    // Rate limit: bytes a second, burst and tokens now (nats-server rlimit).
    private double rateBytesPerSecond;
    private double rateBurst;
    private double rateTokens;
    private long rateUpdated;

    // The message taken but waiting for its time (0: none).
    private ulong heldSequence;
    private ulong heldDeliveryCount;
    private long heldDue;
    private bool heldReplayDone;
    private Timer? paceTimer;

    /// <summary>Whether a rate limit is in force (the runner then computes each message's size before it goes).</summary>
    public bool RateLimited => rateBytesPerSecond > 0;

    /// <summary>Whether a message is held, waiting for its time.</summary>
    public bool Holding => heldSequence != 0;

    /// <summary>Whether the consumer still replays at the original pace.</summary>
    public bool Replaying => replaying;

    /// <summary>
    /// Sets replay and rate state when the consumer starts (nats-server <c>setLeader</c>): replay at the original pace
    /// through <paramref name="streamLastSequence"/>, the stream's last message now.
    /// </summary>
    public void Start(bool replayOriginal, ulong streamLastSequence, ulong rateLimitBitsPerSecond, bool isPush, long maxMessageSize)
    {
        replaying = replayOriginal;
        replayThrough = replaying ? streamLastSequence : 0;
        lastTimestamp = 0;
        SetRateLimit(rateLimitBitsPerSecond, isPush, maxMessageSize);
    }

    /// <summary>nats-server <c>setRateLimit</c>: a new bucket, full (none on pull consumers or at 0).</summary>
    public void SetRateLimit(ulong bitsPerSecond, bool isPush, long maxMessageSize)
    {
        if (bitsPerSecond == 0 || !isPush)
        {
            rateBytesPerSecond = 0;
            return;
        }

        // Go divides as integers; below 8 bps that would never refill, so the fraction is kept.
        rateBytesPerSecond = bitsPerSecond / 8.0;
        rateBurst = maxMessageSize > 0 ? maxMessageSize : DefaultBurst;
        rateTokens = rateBurst;
        rateUpdated = Stopwatch.GetTimestamp();
    }

    /// <summary>Stops the pace timer for good (the consumer stops).</summary>
    public void Stop() => paceTimer?.Dispose();

    /// <summary>
    /// Whether the held message is not due yet; the runner then stops and the timer, armed again for what is left
    /// (a timer may fire a little early, its clock is coarser than the stopwatch's), kicks it when it is.
    /// </summary>
    public bool HeldNotDue()
    {
        if (heldSequence == 0 || Stopwatch.GetTimestamp() >= heldDue)
        {
            return false;
        }

        ArmPaceTimer();
        return true;
    }

    /// <summary>Releases the held message (now due): its stream sequence, delivery count and whether its replay wait is done.</summary>
    public ulong TakeHeld(out ulong deliveryCount, out bool replayDone)
    {
        var sequence = heldSequence;
        deliveryCount = heldDeliveryCount;
        replayDone = heldReplayDone;
        heldSequence = 0;
        return sequence;
    }

    /// <summary>
    /// Decides whether <paramref name="message"/> may go now; if not, holds it and arms the timer for when it may.
    /// Consumes the rate limit's tokens (<paramref name="size"/> bytes) when it goes.
    /// </summary>
    public bool MustWait(StoredMessage message, ulong deliveryCount, int size, bool replayDone)
    {
        if (!replayDone)
        {
            var gap = replaying && lastTimestamp > 0 ? message.Timestamp - lastTimestamp : 0;

            // nats-server tracks the timestamp whether or not it waits (a redelivery's older one included).
            lastTimestamp = message.Timestamp;
            if (gap > ReplayMinimumGapNanoseconds)
            {
                Hold(message.Sequence, deliveryCount, Stopwatch.GetTimestamp() + (long)(gap / 1e9 * Stopwatch.Frequency), replayDone: true);
                return true;
            }
        }

        if (rateBytesPerSecond > 0)
        {
            var now = Stopwatch.GetTimestamp();
            rateTokens = Math.Min(rateBurst, rateTokens + ((now - rateUpdated) / (double)Stopwatch.Frequency * rateBytesPerSecond));
            rateUpdated = now;

            // A message larger than the burst waits for a full bucket and leaves it in debt (Go's limiter would never
            // let it through).
            var needed = Math.Min(size, rateBurst);
            if (rateTokens < needed)
            {
                var wait = (needed - rateTokens) / rateBytesPerSecond;
                Hold(message.Sequence, deliveryCount, now + (long)Math.Ceiling(wait * Stopwatch.Frequency), replayDone: true);
                return true;
            }

            rateTokens -= size;
        }

        return false;
    }

    /// <summary>
    /// Called whenever the runner finds nothing to send: once past what the stream held at start-up
    /// (<paramref name="nextStreamSequence"/> beyond it), replay is over (nats-server clears <c>replay</c> when
    /// <c>sseq &gt; lseq</c> while waiting for messages).
    /// </summary>
    public void CheckReplayCaughtUp(ulong nextStreamSequence)
    {
        if (replaying && nextStreamSequence > replayThrough && heldSequence == 0)
        {
            replaying = false;
        }
    }

    private void Hold(ulong sequence, ulong deliveryCount, long due, bool replayDone)
    {
        heldSequence = sequence;
        heldDeliveryCount = deliveryCount;
        heldDue = due;
        heldReplayDone = replayDone;
        ArmPaceTimer();
    }

    private void ArmPaceTimer()
    {
        var delay = TimeSpan.FromSeconds(Math.Max(0, heldDue - Stopwatch.GetTimestamp()) / (double)Stopwatch.Frequency);
        paceTimer ??= new Timer(static state => ((Action)state!)(), onDue, Timeout.Infinite, Timeout.Infinite);
        paceTimer.Change(delay + TimeSpan.FromMilliseconds(1), Timeout.InfiniteTimeSpan);
    }
}
