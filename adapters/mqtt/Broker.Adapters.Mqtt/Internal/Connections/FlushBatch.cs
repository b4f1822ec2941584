namespace Broker.Adapters.Mqtt.Internal.Connections;

/// <summary>
/// The outputs of the MQTT connections that received deliveries while one MQTT read loop processed what it read: each
/// is flushed once when that batch ends, the deferred flush nats-server does with its pending-flush list. Deliveries
/// made outside an MQTT read loop (a NATS client or a plugin publishing) queue a flush to the thread pool until the bus
/// tells adapters where a producer's batch ends.
/// </summary>
internal sealed class FlushBatch
{
    private static long nextStamp;

    // The batch of this thread's read loops: a batch lives only while one read is handled on one thread, so the
    // threads share them rather than every connection holding one (issue 25).
    [ThreadStatic]
    private static FlushBatch? threadBatch;

    // Between Begin and the end of End; a Begin meanwhile on the same thread (not expected) gets a batch of its own.
    private bool inUse;

    // Made when a batch first lists an output: a subscriber that only receives from NATS publishers never does (issue 25).
    private PacketOutput[]? pending;
    private int count;

    /// <summary>The batch of the read loop running on this thread, or <see langword="null"/>.</summary>
    [ThreadStatic]
    public static FlushBatch? Current;

    /// <summary>Identifies the batch in progress, so a connection is listed once per batch.</summary>
    public long Stamp { get; private set; }

    /// <summary>Starts a batch on this thread; <see cref="End"/> it on the same thread.</summary>
    public static FlushBatch Begin()
    {
        var batch = threadBatch;
        if (batch is null || batch.inUse)
        {
            batch = new FlushBatch();
            threadBatch ??= batch;
        }

        batch.inUse = true;
        batch.Stamp = Interlocked.Increment(ref nextStamp);
        Current = batch;
        return batch;
    }

    public void Add(PacketOutput output)
    {
        pending ??= new PacketOutput[8];
        if (count == pending.Length)
        {
            Array.Resize(ref pending, count * 2);
        }

        pending[count++] = output;
    }

    /// <summary>Flushes every listed output and leaves the thread without a batch.</summary>
    public void End()
    {
        Current = null;
        for (var i = 0; i < count; i++)
        {
            pending![i].Flush();
            pending[i] = null!;
        }

        count = 0;
        inUse = false;
    }
}
