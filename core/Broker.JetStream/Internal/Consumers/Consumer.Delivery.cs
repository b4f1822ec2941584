using Broker.Abstractions;
using Broker.JetStream.Internal.Json;

namespace Broker.JetStream.Internal.Consumers;

/// <summary>
/// Delivery (nats-server <c>getNextMsg</c>, <c>deliverMsg</c>): what the runner sends next, prepared under the lock
/// from the collaborators: a control message from the outbox first; else, when the front end has a target (a push
/// subscriber with flow-control room, or a waiting pull request), the held paced message, a redelivery, the next of the
/// last-per-subject list or the next match in the stream, paced, charged to the request and recorded as delivered.
/// </summary>
internal sealed partial class Consumer
{
    /// <summary>Tells the consumer a matching message was stored (after the stream released its lock).</summary>
    public void OnNewMessage(ulong sequence)
    {
        lock (gate)
        {
            if (closed)
            {
                return;
            }

            // Delivery runs when someone is there to deliver to: an active push subscriber or a waiting pull request.
            cursor.OnStored(sequence);
            if (sequence < cursor.StreamSequence || !(push is not null ? push.Active : pull!.Count > 0))
            {
                return;
            }
        }

        Kick();
    }

    protected override bool TakeNext(ref DeliverySend send)
    {
        lock (gate)
        {
            return TryTake(ref send);
        }
    }

    protected override void Delivered(ulong sequence) => stream.OnAcknowledged(this, sequence);

    protected override void DeliveryFailed(Exception exception)
    {
        lock (gate)
        {
            // A send taken just before its stream stopped meets the stream's disposed client: it goes with the consumer, unlogged.
            if (closed && exception is ObjectDisposedException)
            {
                return;
            }
        }

        JetStreamLog.DeliveryFailed(Account.Logger, stream.Name, Name, exception);
    }

    // The next control message, if any was ever queued (an idle consumer has no outbox). Lock held.
    private bool TakeControl(ref DeliverySend send) => side?.Outbox is { } outbox && outbox.TryTake(ref send);

    /// <summary>Picks the next send: a control message, else the next deliverable message. Lock held.</summary>
    private bool TryTake(ref DeliverySend send)
    {
        // First, so that the advisory of a pause that just ended goes out with this look.
        var paused = side?.Pause is { } pause && pause.Holds();
        var pacer = side?.Pacer;
        if (TakeControl(ref send))
        {
            return true;
        }

        if (closed)
        {
            return false;
        }

        if (paused)
        {
            // nats-server loopAndGatherMsgs: nothing goes out while paused (pull requests wait).
            pull?.WhilePaused(GoTime.NowNanoseconds());
            return TakeControl(ref send);
        }

        byte[] target;
        WaitingRequest? request = null;
        if (push is not null)
        {
            if (!push.CanDeliver())
            {
                pacer?.CheckReplayCaughtUp(cursor.StreamSequence);
                return false;
            }

            target = push.DeliverSubject;
        }
        else
        {
            request = pull!.Next(GoTime.NowNanoseconds(), side?.Priority);
            if (request is null)
            {
                // A 408 or 423 Next answered goes out now.
                pacer?.CheckReplayCaughtUp(cursor.StreamSequence);
                return TakeControl(ref send);
            }

            target = request.Reply;
        }

        if (pacer is not null && pacer.HeldNotDue())
        {
            // A paced message waits for its time; the pace timer kicks the runner then.
            return false;
        }

        var fromHeld = pacer is not null && pacer.Holding;
        var replayDone = false;
        var deliveryCount = fromHeld ? selector.TakeHeld(pacer!, acks, stream.Store, out replayDone) : 0;
        if (deliveryCount == 0)
        {
            fromHeld = false;
            replayDone = false;
            deliveryCount = selector.Next(cursor, acks, stream.Store);
        }

        if (deliveryCount == 0)
        {
            pacer?.CheckReplayCaughtUp(cursor.StreamSequence);
            if (request is not null)
            {
                // Nothing more to deliver now: no-wait requests end here, unless only max ack pending holds messages back.
                if (!selector.BlockedByAckPending)
                {
                    pull!.EndOfStream();
                }

                // A status queued just now, or a MAX_DELIVERIES advisory NextMessage queued, with its JSON.
                if (TakeControl(ref send))
                {
                    return true;
                }
            }

            return false;
        }

        var message = selector.Message;

        // Counted off when taken, as nats-server does before any pacing wait: a held message is no longer pending.
        var counted = !fromHeld && deliveryCount == 1 && cursor.CountOff(message.Sequence);

        // nats-server charges the same size to a pull request's max_bytes, the rate limit and flow control.
        var format = FormatLocked;
        var size = format.DeliverySize(message, deliveryCount, cursor.DeliverySequence, cursor.NumPending());
        if (pacer is not null && pacer.MustWait(message, deliveryCount, pacer.RateLimited ? size : 0, replayDone))
        {
            return false;
        }

        if (request is not null && !pull!.Charge(request, size))
        {
            // Too big for the request's max_bytes: the request was answered with 409 and the message goes back.
            if (counted)
            {
                cursor.Uncount();
            }

            if (deliveryCount > 1)
            {
                acks.Requeue(message.Sequence, deliveryCount);
            }
            else
            {
                cursor.Rewind(message.Sequence);
            }

            return TryTake(ref send);
        }

        var consumerSequence = cursor.TakeDeliverySequence();
        var now = GoTime.NowNanoseconds();

        send.Reply = format.AckSubject(deliveryCount, message.Sequence, consumerSequence, message.Timestamp, cursor.NumPending());
        acks.OnDelivered(message.Sequence, consumerSequence, deliveryCount, now);
        cursor.LastDelivered = now;
        if (config.AckPolicy == ConsumerAckPolicy.None && stream.Config.Retention != RetentionPolicy.Limits)
        {
            // Ack none on an interest or work-queue stream: delivered is done (removed by the runner once sent).
            send.RemoveAfter = message.Sequence;
        }

        if (push is not null)
        {
            push.AfterDelivery(size);
        }
        else
        {
            pull!.AfterDelivery(request!, now);
        }

        send.Subject = target;
        send.DeliverAs = message.Subject.Span;
        send.Headers = side?.Priority is not { } priority ? format.Headers(message) : priority.Deliver(request, format.Headers(message));
        send.Payload = format.Payload(message);
        return true;
    }
}
