using Broker.Core.Internal.Accounts;

namespace Broker.Core.Internal.Clients;

/// <summary>
/// A client's state as a producer: the targets to flush at the end of its batch, the batch's counters, its one-entry
/// match cache and what it makes on first use (stalls, leaf fan-out, service import forwarding, shadow deliveries,
/// mapping scratch). Made at the client's first publish (or first delivery it makes as a producer): a client that only
/// subscribes, as most idle MQTT sessions and many NATS subscribers do, holds none of it (~120 B, issue 25).
/// </summary>
/// <remarks>
/// Only the producer's own thread (one batch at a time, under <c>PublishLock</c> for bus clients) touches it, as it did
/// the fields of <see cref="ClientBase"/> this came from.
/// </remarks>
internal sealed class ProducerBatch
{
    // Clients that received deliveries during the current batch; flushed once by End.
    private ClientBase?[] pendingFlush = [];
    private int pendingFlushCount;
    private long flushStamp;

    // Per batch statistics, added to the server counters once per batch.
    public long InMessages;
    public long InBytes;
    public long OutMessages;
    public long OutBytes;

    /// <summary>The one-entry match cache (a mutable struct: called on the field, never copied).</summary>
    public PublishMatchCache MatchCache;

    /// <summary>Flushes of far-behind clients to wait for before reading more; made on the first stall.</summary>
    public List<Task>? Stalls;

    /// <summary>Made at the first match holding a leaf node link's subscription.</summary>
    public Leaf.LeafFanout? LeafFanout;

    /// <summary>Made at the first forward across a service import.</summary>
    public ServiceImportForwarder? ServiceForwarder;

    /// <summary>Made at the first delivery through a stream import's shadow.</summary>
    public ShadowSubscriptions? ShadowDelivery;

    /// <summary>Made at the first mapped publish.</summary>
    public MappingScratch? MappingScratch;

    /// <summary>Whether deliveries of the current batch wait for <see cref="End"/>.</summary>
    public bool HasPendingFlush => pendingFlushCount > 0;

    /// <summary>Lists <paramref name="target"/> for one flush at the end of the batch of <paramref name="producer"/>.</summary>
    public void AddPendingFlush(ClientBase producer, ClientBase target)
    {
        if (flushStamp == 0)
        {
            flushStamp = producer.Server.NextFlushStamp();
        }

        // Another producer may overwrite the stamp; then we list the target again, which costs one extra flush.
        if (target.ListedInStamp == flushStamp)
        {
            return;
        }

        target.ListedInStamp = flushStamp;
        if (pendingFlushCount == pendingFlush.Length)
        {
            Array.Resize(ref pendingFlush, Math.Max(pendingFlush.Length * 2, 4));
        }

        pendingFlush[pendingFlushCount++] = target;
    }

    /// <summary>
    /// Adds the batch's counters to the server's. Called before any of the batch's output is flushed, so a client that
    /// has its PONG sees its messages in /varz and the Broker meter, as nats-server's read loop adds its counts before
    /// flushing.
    /// </summary>
    public void PublishCounters(ClientBase producer)
    {
        MatchCache.PublishHits();
        if (InMessages != 0)
        {
            if (!producer.IsSystemClient)
            {
                producer.Server.Statistics.AddIn(InMessages, InBytes);
            }

            InMessages = 0;
            InBytes = 0;
        }

        if (OutMessages != 0)
        {
            producer.Server.Statistics.AddOut(OutMessages, OutBytes);
            OutMessages = 0;
            OutBytes = 0;
        }
    }

    /// <summary>Ends the batch: flushes every listed client and collects the far-behind ones' flushes in <see cref="Stalls"/>.</summary>
    public void End()
    {
        for (var i = 0; i < pendingFlushCount; i++)
        {
            if (pendingFlush[i]!.FlushOutput() is { } stall)
            {
                (Stalls ??= []).Add(stall);
            }

            pendingFlush[i] = null;
        }

        pendingFlushCount = 0;
        flushStamp = 0;
    }
}
