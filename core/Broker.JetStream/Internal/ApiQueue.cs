namespace Broker.JetStream.Internal;

/// <summary>
/// The queue of the JetStream API loop (nats-server's API queue): any thread adds, one loop takes, in order. Its ring of
/// slots grows with a burst (10,000 MQTT QoS 1 sessions asking for their consumers at once) and shrinks to half each
/// time a quarter of it is left in use, from <see cref="TrimFrom"/> slots; the channel it replaces never shrank and
/// kept its largest segment (2,048 slots, 32 KB, after 10,000 sessions left, issue 25).
/// </summary>
/// <typeparam name="T">A queued request.</typeparam>
internal sealed class ApiQueue<T>
{
    /// <summary>The slots from which a ring a quarter in use is halved.</summary>
    internal const int TrimFrom = 1024;

    private const int FirstCapacity = 16;

    private readonly Lock gate = new();
    private T[] slots = [];
    private int head;
    private int count;
    private bool completed;

    // The loop waiting for a request (WaitToReadAsync found none); completed by the next add or by Complete.
    private TaskCompletionSource<bool>? waiting;

    /// <summary>The ring's slots (tests read it).</summary>
    internal int Capacity
    {
        get
        {
            lock (gate)
            {
                return slots.Length;
            }
        }
    }

    /// <summary>Adds <paramref name="item"/>; false once <see cref="Complete"/> was called. Any thread.</summary>
    public bool TryWrite(T item)
    {
        TaskCompletionSource<bool>? wake;
        lock (gate)
        {
            if (completed)
            {
                return false;
            }

            if (count == slots.Length)
            {
                Resize(Math.Max(slots.Length * 2, FirstCapacity));
            }

            slots[(head + count) % slots.Length] = item;
            count++;
            wake = waiting;
            waiting = null;
        }

        wake?.TrySetResult(true);
        return true;
    }

    /// <summary>Takes the oldest request; false when none waits. The loop only.</summary>
    public bool TryRead(out T item)
    {
        lock (gate)
        {
            if (count == 0)
            {
                item = default!;
                return false;
            }

            item = slots[head];
            slots[head] = default!;
            head = (head + 1) % slots.Length;
            count--;
            if (slots.Length >= TrimFrom && count < slots.Length / 4)
            {
                // Halving at a quarter keeps the copies linear in what was read, and a ring that grows again does not shrink at once.
                Resize(slots.Length / 2);
            }

            return true;
        }
    }

    /// <summary>Completes with true when a request waits, false once completed and empty. The loop only.</summary>
    public ValueTask<bool> WaitToReadAsync()
    {
        lock (gate)
        {
            if (count > 0)
            {
                return new ValueTask<bool>(true);
            }

            if (completed)
            {
                return new ValueTask<bool>(false);
            }

            waiting ??= new TaskCompletionSource<bool>(TaskCreationOptions.RunContinuationsAsynchronously);
            return new ValueTask<bool>(waiting.Task);
        }
    }

    /// <summary>Takes no more requests; the loop ends once it has read those queued.</summary>
    public void Complete()
    {
        TaskCompletionSource<bool>? wake;
        lock (gate)
        {
            completed = true;
            wake = waiting;
            waiting = null;
        }

        wake?.TrySetResult(false);
    }

    private void Resize(int capacity)
    {
        var resized = new T[capacity];
        for (var i = 0; i < count; i++)
        {
            resized[i] = slots[(head + i) % slots.Length];
        }

        slots = resized;
        head = 0;
    }
}
