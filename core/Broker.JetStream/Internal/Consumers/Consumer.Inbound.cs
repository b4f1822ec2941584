using System.Buffers;
using System.Text;
using Broker.Abstractions;
using Broker.JetStream.Internal.Json;

namespace Broker.JetStream.Internal.Consumers;

/// <summary>
/// What comes in, handed under the lock to the collaborator it concerns, then a kick of the runner when delivery may go
/// on: acknowledgements of each kind and pull requests (read from the bus by the stream's <see cref="ConsumerInbox"/>), flow-control replies,
/// the collaborators' timers, and the stream's events (a message removed, a purge, whether a message needs an ack).
/// </summary>
internal sealed partial class Consumer
{
    /// <summary>
    /// Acknowledges (<see cref="AckTracker.Acknowledge"/>), then tells the stream what is acknowledged (interest and
    /// work-queue retention) outside the lock; a positive ack (not a term) passes its delivery count for sampling.
    /// </summary>
    public void Acknowledge(ulong streamSeq, ulong consumerSeq, ulong sampleDeliveries = 0)
    {
        var acknowledged = new List<ulong>(1);
        bool kick;
        lock (gate)
        {
            if (closed)
            {
                return;
            }

            side?.Inactivity?.OnAcknowledgement();
            kick = acks.Acknowledge(streamSeq, consumerSeq, sampleDeliveries, cursor.Delivered, acknowledged);
        }

        foreach (var sequence in acknowledged)
        {
            stream.OnAcknowledged(this, sequence);
        }

        if (kick)
        {
            Kick();
        }
    }

    /// <summary>A negative acknowledgement (<c>-NAK</c>, with an optional delay): the message is redelivered.</summary>
    public void Nak(ulong streamSeq, ulong consumerSeq, ulong deliveryCount, ReadOnlySpan<byte> argument)
    {
        var text = Encoding.UTF8.GetString(argument).Trim();
        lock (gate)
        {
            side?.Inactivity?.OnAcknowledgement();
            if (closed || !acks.Nak(streamSeq, consumerSeq, deliveryCount, text, cursor.DeliverySequence))
            {
                return;
            }
        }

        Kick();
    }

    /// <summary>Work in progress (<c>+WPI</c>): the ack wait of the delivery starts again.</summary>
    public void Progress(ulong streamSeq)
    {
        lock (gate)
        {
            side?.Inactivity?.OnAcknowledgement();
            acks.Progress(streamSeq);
        }
    }

    /// <summary>Terminated (<c>+TERM</c>): acknowledged, never redelivered, advised.</summary>
    public void Terminate(ulong streamSeq, ulong consumerSeq, ulong deliveryCount)
    {
        Acknowledge(streamSeq, consumerSeq);
        lock (gate)
        {
            Events.Terminated(streamSeq, consumerSeq, deliveryCount);
        }

        Kick();
    }

    /// <summary>The redelivery timer fired (<see cref="AckTracker.CheckPending"/>).</summary>
    void IConsumerTimers.OnPendingDue()
    {
        bool kick;
        lock (gate)
        {
            // Messages below the stream's first are gone: their deliveries wait for nothing.
            var first = !closed && acks.Count > 0 ? stream.Store.GetState().FirstSequence : 0;
            kick = acks.CheckPending(GoTime.NowNanoseconds(), first);
        }

        if (kick)
        {
            Kick();
        }
    }

    /// <summary>A pull request (<c>MSG.NEXT</c>, or an ack with <c>+NXT</c>): push consumers answer 409.</summary>
    public void OnNextRequest(ReadOnlySpan<byte> replySpan, ReadOnlySpan<byte> body)
    {
        var reply = replySpan.ToArray();
        lock (gate)
        {
            if (closed)
            {
                return;
            }

            if (pull is null)
            {
                Outbox.Status(reply, "NATS/1.0 409 Consumer is push based\r\n\r\n"u8);
            }
            else
            {
                pull.Add(reply, body, GoTime.NowNanoseconds(), cursor.Delivered, side?.Priority);
            }
        }

        Kick();
    }

    /// <summary>The front end's timer fired: a pull consumer's expiries and heartbeats, a push consumer's interest and idle heartbeats.</summary>
    void IConsumerTimers.OnFrontEndDue()
    {
        lock (gate)
        {
            if (closed)
            {
                return;
            }

            var now = GoTime.NowNanoseconds();
            if (push is not null)
            {
                push.OnTimer(now, cursor.LastDelivered, cursor.Delivered);
            }
            else
            {
                pull!.OnTimer(now, cursor.Delivered);
            }
        }

        Kick();
    }

    /// <summary>The client answered a flow-control request: the bytes it covered are released and the window grows.</summary>
    public void OnFlowControl(ReadOnlySpan<byte> subject)
    {
        lock (gate)
        {
            if (push is null || !push.OnFlowControl(subject))
            {
                return;
            }
        }

        Kick();
    }

    /// <summary>
    /// The store removed a message (limits, age, a delete): a delivery pending for it is done, and the cached pending
    /// count may drop (nats-server <c>decStreamPending</c>).
    /// </summary>
    public void OnMessageRemoved(ulong sequence, ReadOnlySpan<byte> subject, long messages)
    {
        var matches = sequence != 0 && Matches(subject);
        lock (gate)
        {
            if (cursor.OnRemoved(sequence, matches, messages))
            {
                acks.OnRemoved(sequence, cursor.Delivered);
            }
        }
    }

    /// <summary>The stream was purged (nats-server <c>consumer.purge</c>): skip what is gone, forget pending deliveries.</summary>
    public void OnPurged(ulong first, ulong last)
    {
        lock (gate)
        {
            if (first == 0)
            {
                first = last + 1;
            }

            cursor.SkipTo(first);
            acks.OnPurged(first, cursor.Delivered);
        }

        Kick();
    }

    /// <summary>Whether this consumer still needs to acknowledge <paramref name="sequence"/> (nats-server <c>needAck</c>).</summary>
    public bool NeedsAck(ulong sequence, ReadOnlySpan<byte> subject)
    {
        if (!Matches(subject))
        {
            return false;
        }

        lock (gate)
        {
            return acks.NeedsAck(sequence, cursor.StreamSequence);
        }
    }
}
