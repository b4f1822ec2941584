using Broker.JetStream.Internal.Json;

namespace Broker.JetStream.Internal.Consumers;

/// <summary>
/// A consumer's pause (nats-server 2.11 <c>pause_until</c>, <c>updatePauseState</c>): until its deadline the consumer
/// delivers nothing (pull requests wait), then it delivers again by itself, woken by the engine's one
/// <see cref="ConsumerPauseTimer"/>. The deadline lives in the configuration, so it survives a restart with it. Each
/// change and the end of a pause is announced on <c>$JS.EVENT.ADVISORY.CONSUMER.PAUSE.&lt;stream&gt;.&lt;consumer&gt;</c>.
/// Guarded by the consumer's lock.
/// </summary>
/// <param name="consumer">The consumer the timer wakes.</param>
/// <param name="timer">The engine's pause timer.</param>
/// <param name="events">Where the pause advisories go.</param>
internal sealed class ConsumerPause(Consumer consumer, ConsumerPauseTimer timer, ConsumerEvents events)
{
    // The configured deadline (ns since the Unix epoch); 0 when not set or Go's zero time.
    private long until;

    /// <summary>Whether the consumer is paused now: one field read when it never was.</summary>
    public bool IsPaused => until != 0 && GoTime.NowNanoseconds() < until;

    /// <summary>How long the pause still lasts at <paramref name="now"/> (ns), 0 when not paused.</summary>
    public long Remaining(long now) => until != 0 && now < until ? until - now : 0;

    /// <summary>
    /// Takes the deadline of a consumer being created or restored; a new consumer that starts paused is announced
    /// (nats-server sends that advisory after the create response: it goes out with the first send).
    /// </summary>
    public void Initialize(long? pauseUntil, bool announce)
    {
        until = pauseUntil ?? 0;
        if (announce && IsPaused)
        {
            events.Paused(until);
        }
    }

    /// <summary>Arms the engine's timer for the deadline, or forgets it when the consumer is not paused.</summary>
    public void Schedule()
    {
        if (IsPaused)
        {
            timer.Schedule(consumer, until);
        }
        else
        {
            timer.Cancel(consumer);
        }
    }

    /// <summary>A configuration update: a changed deadline is announced and scheduled (nats-server <c>updateConfig</c>).</summary>
    public void Change(long? pauseUntil)
    {
        var next = pauseUntil ?? 0;
        if (next == until)
        {
            return;
        }

        until = next;
        events.Paused(until);
        Schedule();
    }

    /// <summary>The timer reached <paramref name="deadline"/>: true (announced) when it is still this pause's and it is over.</summary>
    public bool Ended(long deadline)
    {
        if (deadline != until || IsPaused)
        {
            return false;
        }

        events.Paused(until);
        return true;
    }

    /// <summary>The consumer stops: its deadline leaves the timer.</summary>
    public void Stop() => timer.Cancel(consumer);
}
