using Broker.JetStream.Internal.Json;

namespace Broker.JetStream.Internal.Consumers;

/// <summary>
/// The one timer that ends the pauses of all the engine's consumers (2.11 <c>pause_until</c>). nats-server arms a
/// <c>time.AfterFunc</c> per paused consumer (<c>updatePauseState</c>); here the paused consumers wait in one queue
/// ordered by their deadline and one <see cref="Timer"/> is armed for the earliest, so a paused consumer costs a queue
/// entry, not a timer or a task. When a deadline passes, the consumer is kicked (outside the lock) and delivers again.
/// </summary>
/// <remarks>
/// <c>gate</c> (a leaf) guards the queue and the deadline the timer is armed for. A consumer schedules and cancels
/// holding its own lock (<c>Consumer.gate</c> before <c>ConsumerPauseTimer.gate</c>); the timer calls consumers
/// holding nothing.
/// </remarks>
internal sealed class ConsumerPauseTimer : IDisposable
{
    // The longest a System.Threading.Timer waits (ms); a later deadline re-arms when it fires.
    private const long MaxDelayMilliseconds = 4_294_967_294;

    private readonly Lock gate = new();
    private readonly PriorityQueue<Consumer, long> queue = new();
    private Timer? timer;
    private long armedFor;
    private bool disposed;

    /// <summary>Consumers waiting for the end of a pause.</summary>
    public int Count
    {
        get
        {
            lock (gate)
            {
                return queue.Count;
            }
        }
    }

    /// <summary>Ends <paramref name="consumer"/>'s pause at <paramref name="until"/> (ns since the Unix epoch), replacing an earlier deadline.</summary>
    public void Schedule(Consumer consumer, long until)
    {
        lock (gate)
        {
            queue.Remove(consumer, out _, out _);
            queue.Enqueue(consumer, until);
            Arm(GoTime.NowNanoseconds());
        }
    }

    /// <summary>Forgets <paramref name="consumer"/>'s deadline (resumed, or stopped). The timer, if armed for it, fires and re-arms.</summary>
    public void Cancel(Consumer consumer)
    {
        lock (gate)
        {
            queue.Remove(consumer, out _, out _);
        }
    }

    public void Dispose()
    {
        lock (gate)
        {
            disposed = true;
            queue.Clear();
            timer?.Dispose();
        }
    }

    /// <summary>Arms the timer for the earliest deadline unless it is armed for one as early. Lock held.</summary>
    private void Arm(long now)
    {
        if (disposed || !queue.TryPeek(out _, out var first) || (armedFor != 0 && armedFor <= first))
        {
            return;
        }

        armedFor = first;

        // Made with the first pause: an engine whose consumers never pause has no timer.
        timer ??= new Timer(static state => ((ConsumerPauseTimer)state!).Fire(), this, Timeout.Infinite, Timeout.Infinite);
        var milliseconds = Math.Clamp((first - now + 999_999) / 1_000_000, 1, MaxDelayMilliseconds);
        timer.Change(milliseconds, Timeout.Infinite);
    }

    private void Fire()
    {
        List<Consumer>? due = null;
        lock (gate)
        {
            armedFor = 0;
            var now = GoTime.NowNanoseconds();
            while (queue.TryPeek(out var consumer, out var until) && until <= now)
            {
                queue.Dequeue();
                (due ??= []).Add(consumer);
            }

            Arm(now);
        }

        if (due is null)
        {
            return;
        }

        foreach (var consumer in due)
        {
            // Its next look at the pause finds it over (ConsumerPause.Holds), announces that and delivers.
            consumer.Kick();
        }
    }
}
