using Broker.Abstractions;

namespace Broker.Core.Internal.Clients;

/// <summary>
/// The handlers' side of the delivery queue. Producers copy messages into <see cref="queue"/> and, once per producer
/// batch, <see cref="FlushOutput"/> schedules one drain of the client on the thread pool, unless one is scheduled or
/// running already. The drain runs the handlers one message at a time, in queue order, holding no lock, so
/// handlers of one client never run concurrently, never recurse, and may call the bus in any way.
/// </summary>
/// <remarks>
/// Why a queue rather than calling handlers on the publisher's thread: a publisher holds its own publish lock while it
/// routes, so a handler called there that publishes through another client takes a second publish lock, and two such
/// handlers publishing through each other's clients from two threads deadlock; handlers that answer each other
/// recurse without bound. nats-server avoids the same trap by handing messages for internal clients to queues
/// (its internal send queue and JetStream's ipQueues). The copy costs a memcpy into pooled memory per message and a
/// thread-pool hand-off per batch, and buys parallelism: a NATS read loop never waits for a handler.
/// </remarks>
internal partial class InProcessClient : IThreadPoolWorkItem
{
    // Handler calls between two flushes of the publishes handlers make through this client.
    private const int HandlerFlushInterval = 128;

    // Batches one drain takes before it gives its thread back to the pool (rescheduling itself).
    private const int BatchesPerDrain = 16;

    // Made with the first message for a handler: a client that is never sent one holds no queue (issue 25). Once made
    // it stays; the drain runs only after a message was queued, so it always finds one.
    private DeliveryQueue? queue;

    // 0: no drain scheduled or running; 1: one is.
    private int drainState;

    /// <summary>Bytes waiting for this client's handlers.</summary>
    public long QueuedBytes => Volatile.Read(ref queue)?.QueuedBytes ?? 0;

    /// <summary>The handlers' queue, made by the first producer that needs it.</summary>
    private DeliveryQueue Queue => Volatile.Read(ref queue) ?? Interlocked.CompareExchange(ref queue, new DeliveryQueue(), null) ?? queue!;

    /// <summary>
    /// Ends a producer's batch for this client: schedules a drain. Returns a task when the handlers are far behind
    /// (three quarters of max_pending queued) for a NATS producer to stall on, as for a slow connection; nothing is
    /// dropped, since handlers of in-process clients must see every message.
    /// </summary>
    public override Task? FlushOutput()
    {
        if (Volatile.Read(ref queue) is not { } pending)
        {
            return null;
        }

        if (pending.HasIncoming && Interlocked.CompareExchange(ref drainState, 1, 0) == 0)
        {
            Server.ScheduleDrain(this);
        }

        var limit = Server.Options.MaxPending;
        return pending.StallWhileAbove(limit / 4 * 3, limit / 2);
    }

    void IThreadPoolWorkItem.Execute()
    {
        var outer = BusThread.Draining;
        BusThread.Draining = this;
        try
        {
            Drain();
        }
        finally
        {
            BusThread.Draining = outer;
        }
    }

    private void Drain()
    {
        for (var round = 0; ; round++)
        {
            if (round == BatchesPerDrain)
            {
                // Still busy: continue as a fresh work item so other pool work gets a turn (the drain stays scheduled).
                Server.ScheduleDrain(this);
                return;
            }

            var batch = queue!.Take();
            if (batch is null)
            {
                // A full fence between clearing the flag and looking again: a producer that found the flag set after
                // our last look has queued something we will now see, or it saw the flag clear and scheduled a drain.
                Interlocked.Exchange(ref drainState, 0);
                if (!queue.HasIncoming || Interlocked.CompareExchange(ref drainState, 1, 0) != 0)
                {
                    return;
                }

                continue;
            }

            RunHandlers(batch);
            queue.Release(batch);
            FlushHandlerPublishes();
        }
    }

    private void RunHandlers(DeliveryQueue.Batch batch)
    {
        var entries = batch.Entries;
        for (var i = 0; i < entries.Length; i++)
        {
            if (IsClosed)
            {
                return;
            }

            var subscription = entries[i].Subscription;
            if (subscription.Cancelled)
            {
                continue;
            }

            try
            {
                var message = batch.View(entries[i]);
                if (subscription.Handler is BusMessageHandler handler)
                {
                    handler(message);
                }
                else
                {
                    ((IBusMessageReceiver)subscription.Handler!).Receive(message);
                }
            }
#pragma warning disable CA1031 // A faulty handler must not stop the messages behind it.
            catch (Exception ex)
#pragma warning restore CA1031
            {
                InProcessLog.HandlerFailed(Server.Logger, Name ?? "internal", subscription.SubjectString, ex);
            }

            if (i % HandlerFlushInterval == HandlerFlushInterval - 1)
            {
                FlushHandlerPublishes();
            }
        }
    }

    /// <summary>Flushes what the handlers published through this client (deferred while they run; see <see cref="DefersFlush"/>).</summary>
    private void FlushHandlerPublishes()
    {
        if (!HasPendingFlush)
        {
            return;
        }

        lock (PublishLock)
        {
            EndBatch();
        }
    }
}
