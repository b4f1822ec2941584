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
/// and held; the runner stops and a timer kicks it when the message is due. A held message goes out before anything
/// else, to whichever target is there then (a pull request that expired meanwhile does not get it).
/// </summary>
internal sealed partial class Consumer
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

    /// <summary>Sets replay and rate state when the consumer starts (nats-server <c>setLeader</c>). Lock held.</summary>
    private void StartPacing()
    {
        replaying = config.ReplayPolicy == Json.ReplayPolicy.Original;
        replayThrough = replaying ? stream.Store.GetState().LastSequence : 0;
        lastTimestamp = 0;
        SetRateLimit(config.RateLimit);
    }

    /// <summary>nats-server <c>setRateLimit</c>: a new bucket, full. Lock held.</summary>
    private void SetRateLimit(ulong bitsPerSecond)
    {
        if (bitsPerSecond == 0 || !config.IsPush)
        {
            rateBytesPerSecond = 0;
            return;
        }

        // Go divides as integers; below 8 bps that would never refill, so the fraction is kept.
        rateBytesPerSecond = bitsPerSecond / 8.0;
        var maxMessageSize = stream.Config.MaxMsgSize;
        rateBurst = maxMessageSize > 0 ? maxMessageSize : DefaultBurst;
        rateTokens = rateBurst;
        rateUpdated = Stopwatch.GetTimestamp();
    }

    /// <summary>
    /// Whether the held message is not due yet; the runner then stops and the timer, armed again for what is left
    /// (a timer may fire a little early, its clock is coarser than the stopwatch's), kicks it when it is. Lock held.
    /// </summary>
    private bool HeldNotDue()
    {
        if (heldSequence == 0 || Stopwatch.GetTimestamp() >= heldDue)
        {
            return false;
        }

        ArmPaceTimer();
        return true;
    }

    /// <summary>
    /// Loads the held message (now due) into the scratch message: its delivery count, or 0 when it went meanwhile
    /// (removed from the stream, or acknowledged before its redelivery). Lock held.
    /// </summary>
    private ulong TakeHeld(out bool replayDone)
    {
        var sequence = heldSequence;
        var deliveryCount = heldDeliveryCount;
        replayDone = heldReplayDone;
        heldSequence = 0;
        if (deliveryCount > 1 && !pending.ContainsKey(sequence))
        {
            return 0;
        }

        return stream.Store.Load(sequence, scratch) == LoadStatus.Found ? deliveryCount : 0;
    }

    /// <summary>
    /// Decides whether the message in the scratch buffer may go now; if not, holds it and arms the timer for when it
    /// may. Consumes the rate limit's tokens when it goes. Lock held.
    /// </summary>
    private bool MustWait(ulong deliveryCount, int size, bool replayDone)
    {
        var message = scratch;
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
    /// The size nats-server charges a delivery (its <c>sz</c>): subject, ack reply, headers and payload as sent, so a
    /// client's <c>max_bytes</c> arithmetic (nats.c's fetch tests count it) comes out as against nats-server.
    /// </summary>
    private int DeliverySize(ulong deliveryCount, ulong numPending)
    {
        var message = scratch;
        var ackLength = ackPrefix.Length + Digits(deliveryCount) + Digits(message.Sequence) + Digits(deliverySequence)
            + Digits((ulong)Math.Max(message.Timestamp, 0)) + Digits(numPending) + 4;
        var body = config.HeadersOnly
            ? (message.Headers.Length == 0 ? 10 : message.Headers.Length - 2) + 19 + Digits((ulong)message.Payload.Length)
            : message.Headers.Length + message.Payload.Length;
        return message.Subject.Length + ackLength + body;

        static int Digits(ulong value)
        {
            var digits = 1;
            while (value >= 10)
            {
                value /= 10;
                digits++;
            }

            return digits;
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
        paceTimer ??= new Timer(static state => ((Consumer)state!).Kick(), this, Timeout.Infinite, Timeout.Infinite);
        paceTimer.Change(delay + TimeSpan.FromMilliseconds(1), Timeout.InfiniteTimeSpan);
    }

    /// <summary>
    /// Called whenever the runner finds nothing to send: once past what the stream held at start-up, replay is over
    /// (nats-server clears <c>replay</c> when <c>sseq &gt; lseq</c> while waiting for messages). Lock held.
    /// </summary>
    private void CheckReplayCaughtUp()
    {
        if (replaying && streamSequence > replayThrough && heldSequence == 0)
        {
            replaying = false;
        }
    }
}
