using System.Buffers;
using Broker.Abstractions;

namespace Broker.JetStream.Internal.Consumers;

/// <summary>What the runner sends next: a control message or a delivery, prepared under the consumer's lock.</summary>
internal ref struct DeliverySend
{
    /// <summary>The subject that selects the subscribers (deliver subject, request inbox, status or advisory subject).</summary>
    public ReadOnlySpan<byte> Subject;

    /// <summary>The subject the subscribers see (the stored message's), or empty for <see cref="Subject"/> itself.</summary>
    public ReadOnlySpan<byte> DeliverAs;

    /// <summary>The reply subject (a delivery's ack subject), or empty.</summary>
    public ReadOnlySpan<byte> Reply;

    /// <summary>The header block, or empty.</summary>
    public ReadOnlySequence<byte> Headers;

    /// <summary>The payload, or empty.</summary>
    public ReadOnlySequence<byte> Payload;

    /// <summary>A stream sequence that is done once sent (ack none on an interest or work-queue stream), 0 for none.</summary>
    public ulong RemoveAfter;
}

/// <summary>
/// The delivery loop (nats-server <c>loopAndGatherMsgs</c>, <c>deliverMsg</c>). Whoever has a reason to deliver (a new
/// message, a pull request, an acknowledgement freeing room, a timer) calls <see cref="Kick"/>; one caller at a time
/// becomes the runner and sends, on its own thread, until nothing is deliverable, so a message published while a
/// consumer waits reaches it without a thread hop. A runner hands off to the thread pool after a batch, so no
/// publisher's thread is kept for long. Each send is prepared under the consumer's lock into buffers only the runner
/// uses and published here after the lock is released; control messages go out through the same runner, in order.
/// </summary>
/// <remarks>
/// The consumer derives from it, so the runner's two flags are the consumer's fields: as a collaborator of its own it was
/// an object (40 B) and a reference in each of 10,000 idle MQTT QoS 1 consumers (issue 25). It holds no other state.
/// </remarks>
internal abstract class DeliveryRunner
{
    private const int RunnerBatch = 256;

    private int running;
    private int rerun;

    /// <summary>The client that publishes the sends: a stored message goes with <see cref="IDeliverAsPublisher.Publish"/>.</summary>
    public abstract IBusClient Client { get; }

    /// <summary>Prepares the next send (taking the consumer's lock); false when nothing is to be sent now.</summary>
    protected abstract bool TakeNext(ref DeliverySend send);

    /// <summary>A message delivered under ack none on an interest or work-queue stream is done (no lock held).</summary>
    protected abstract void Delivered(ulong sequence);

    /// <summary>A delivery failed with <paramref name="exception"/> (logged; the runner gives up its role).</summary>
    protected abstract void DeliveryFailed(Exception exception);

    /// <summary>Asks for delivery; runs it on this thread unless a runner is already at work.</summary>
    public void Kick()
    {
        // The request is written before the role is tried for: written after, a runner finishing meanwhile (between the
        // failed try and the write) would read no request, give up its role, and the wake-up would be lost.
        Volatile.Write(ref rerun, 1);
        if (Interlocked.Exchange(ref running, 1) != 0)
        {
            return;
        }

        Run();
    }

    private void Run()
    {
        while (true)
        {
            Volatile.Write(ref rerun, 0);
            bool more;
            try
            {
                more = SendBatch();
            }
#pragma warning disable CA1031 // A delivery fault is logged; the runner must give up its role so later kicks deliver.
            catch (Exception ex)
#pragma warning restore CA1031
            {
                DeliveryFailed(ex);
                more = false;
            }

            if (more)
            {
                // A full batch: continue on the pool, keeping the runner role.
                ThreadPool.UnsafeQueueUserWorkItem(static runner => runner.Run(), this, preferLocal: false);
                return;
            }

            // A full fence between giving up the role and reading the request (a plain write may pass the read).
            Interlocked.Exchange(ref running, 0);
            if (Volatile.Read(ref rerun) == 0 || Interlocked.Exchange(ref running, 1) != 0)
            {
                return;
            }
        }
    }

    /// <summary>Sends up to a batch; true when the batch filled (more may be deliverable).</summary>
    private bool SendBatch()
    {
        var client = Client;
        for (var i = 0; i < RunnerBatch; i++)
        {
            var send = default(DeliverySend);
            if (!TakeNext(ref send))
            {
                return false;
            }

            if (send.DeliverAs.IsEmpty)
            {
                client.Publish(send.Subject, send.Reply, send.Headers, send.Payload);
            }
            else
            {
                // The stored message keeps its own subject, routed to the deliver subject or the request's inbox.
                client.Publish(send.Subject, send.DeliverAs, send.Reply, send.Headers, send.Payload);
            }

            if (send.RemoveAfter != 0)
            {
                Delivered(send.RemoveAfter);
            }
        }

        return true;
    }
}
