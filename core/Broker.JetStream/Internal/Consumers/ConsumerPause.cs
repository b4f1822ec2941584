using Broker.JetStream.Internal.Json;

namespace Broker.JetStream.Internal.Consumers;

/// <summary>
/// A consumer's pause (nats-server 2.11 <c>pause_until</c>, <c>updatePauseState</c>): until its deadline the consumer
/// delivers nothing (pull requests wait), then it delivers again by itself, kicked by the engine's one
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

    // No pause waits for its end to be announced (never paused, resumed, or over).
    private bool ended = true;

    /// <summary>Whether the consumer is paused now.</summary>
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
        ended = !IsPaused;
        if (announce && !ended)
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
        ended = !IsPaused;
        Schedule();
    }

    /// <summary>
    /// Whether the pause holds deliveries back now (one field read when no pause is on). The first look after the
    /// deadline (the timer kicks the consumer then) announces the end and lets deliveries go.
    /// </summary>
    public bool Holds()
    {
        if (ended)
        {
            return false;
        }

        if (GoTime.NowNanoseconds() < until)
        {
            return true;
        }

        ended = true;
        events.Paused(until);
        return false;
    }

    /// <summary>The consumer stops: its deadline leaves the timer, and its end is not announced.</summary>
    public void Stop()
    {
        ended = true;
        timer.Cancel(consumer);
    }
}
