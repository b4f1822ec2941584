using System.Buffers;
using System.Buffers.Text;
using System.Text;
using System.Text.Json;
using Broker.Abstractions;
using Broker.JetStream.Internal.Json;
using Broker.JetStream.Internal.Models;

namespace Broker.JetStream.Internal.Consumers;

/// <summary>
/// Acknowledgements (nats-server <c>processAck</c>): the body of a message to a delivery's ack subject says what to do
/// (empty, <c>+ACK</c> or <c>+OK</c>: acknowledged; <c>-NAK</c> [delay]: redeliver; <c>+WPI</c>: still working;
/// <c>+NXT</c> [request]: acknowledged, send the next; <c>+TERM</c>: never redeliver). An ack sent with a reply subject
/// is confirmed with an empty message. Deliveries not acknowledged within <c>ack_wait</c> (or the <c>backoff</c> step)
/// are redelivered, up to <c>max_deliver</c>.
/// </summary>
internal sealed partial class Consumer
{
    private Timer? pendingTimer;
    private bool pendingTimerArmed;

    private long AckWait => config.AckWait > 0 ? config.AckWait : 30_000_000_000;

    private void OnAck(in BusMessage message)
    {
        if (!TryParseAckSubject(message.Subject, out var streamSeq, out var consumerSeq, out var deliveryCount))
        {
            return;
        }

        var body = message.Payload.IsSingleSegment ? message.Payload.FirstSpan : message.Payload.ToArray();
        var confirm = !message.ReplyTo.IsEmpty;
        if (body.IsEmpty || body.SequenceEqual("+ACK"u8) || body.SequenceEqual("+OK"u8))
        {
            Acknowledge(streamSeq, consumerSeq, sampleDeliveries: deliveryCount);
        }
        else if (body.StartsWith("+NXT"u8))
        {
            Acknowledge(streamSeq, consumerSeq, sampleDeliveries: deliveryCount);
            if (confirm)
            {
                OnNextRequest(message.ReplyTo, body[4..]);
            }

            confirm = false;
        }
        else if (body.StartsWith("-NAK"u8))
        {
            Nak(streamSeq, consumerSeq, deliveryCount, body[4..]);
        }
        else if (body.SequenceEqual("+WPI"u8))
        {
            Progress(streamSeq);
        }
        else if (body.StartsWith("+TERM"u8))
        {
            Acknowledge(streamSeq, consumerSeq);
            lock (gate)
            {
                Advise("MSG_TERMINATED", "io.nats.jetstream.advisory.v1.terminated", streamSeq, consumerSeq, deliveryCount);
            }

            Kick();
        }

        if (confirm)
        {
            Client.Publish(message.ReplyTo, default, ReadOnlySequence<byte>.Empty, ReadOnlySequence<byte>.Empty);
        }
    }

    /// <summary>Reads dc, sseq and dseq from <c>$JS.ACK.&lt;stream&gt;.&lt;consumer&gt;.&lt;dc&gt;.&lt;sseq&gt;.&lt;dseq&gt;.&lt;ts&gt;.&lt;pending&gt;</c>.</summary>
    private bool TryParseAckSubject(ReadOnlySpan<byte> subject, out ulong streamSeq, out ulong consumerSeq, out ulong deliveryCount)
    {
        streamSeq = consumerSeq = deliveryCount = 0;
        if (!subject.StartsWith(ackPrefix))
        {
            return false;
        }

        var rest = subject[ackPrefix.Length..];
        Span<ulong> numbers = stackalloc ulong[5];
        for (var i = 0; i < 5; i++)
        {
            var dot = rest.IndexOf((byte)'.');
            var token = dot < 0 ? rest : rest[..dot];
            if ((dot < 0) != (i == 4) || !Utf8Parser.TryParse(token, out numbers[i], out var used) || used != token.Length)
            {
                // The timestamp token may be negative in theory; anything else malformed is not an ack of ours.
                if (i != 3 || !Utf8Parser.TryParse(token, out long _, out used) || used != token.Length)
                {
                    return false;
                }
            }

            rest = dot < 0 ? default : rest[(dot + 1)..];
        }

        deliveryCount = numbers[0];
        streamSeq = numbers[1];
        consumerSeq = numbers[2];
        return true;
    }

    /// <summary>
    /// nats-server <c>processAckMsg</c>: removes what is acknowledged and moves the ack floor; a positive ack (not a
    /// term) passes the delivery count so it may be sampled (<c>sample_freq</c>).
    /// </summary>
    private void Acknowledge(ulong streamSeq, ulong consumerSeq, ulong sampleDeliveries = 0)
    {
        var acknowledged = new List<ulong>(1);
        var wasFull = false;
        var sampled = false;
        lock (gate)
        {
            if (closed)
            {
                return;
            }

            switch (config.AckPolicy)
            {
                case ConsumerAckPolicy.Explicit:
                    if (pending.Remove(streamSeq, out var delivery))
                    {
                        sampled = sampleDeliveries != 0 && SampleAck(streamSeq, consumerSeq, sampleDeliveries, delivery.Timestamp);

                        wasFull = config.MaxAckPending > 0 && pending.Count + 1 >= config.MaxAckPending;
                        consumerSeq = delivery.ConsumerSequence;
                        acknowledged.Add(streamSeq);
                    }

                    if (pending.Count == 0)
                    {
                        ackFloorConsumer = deliverySequence - 1;
                        ackFloorStream = streamSequence - 1;
                    }
                    else if (consumerSeq == ackFloorConsumer + 1)
                    {
                        ackFloorConsumer = consumerSeq;
                        ackFloorStream = streamSeq;
                        for (var next = streamSeq + 1; next < streamSequence; next++)
                        {
                            if (pending.TryGetValue(next, out var later))
                            {
                                ackFloorConsumer = later.ConsumerSequence - 1;
                                ackFloorStream = next - 1;
                                break;
                            }
                        }
                    }

                    redeliveries.Remove(streamSeq);
                    RemoveFromRedeliverQueue(streamSeq);
                    break;
                case ConsumerAckPolicy.All:
                    if (consumerSeq <= ackFloorConsumer || streamSeq <= ackFloorStream)
                    {
                        return;
                    }

                    wasFull = config.MaxAckPending > 0 && pending.Count >= config.MaxAckPending;
                    ackFloorConsumer = consumerSeq;
                    ackFloorStream = streamSeq;
                    foreach (var sequence in pending.Keys.Where(s => s <= streamSeq).ToList())
                    {
                        pending.Remove(sequence);
                        redeliveries.Remove(sequence);
                        RemoveFromRedeliverQueue(sequence);
                        acknowledged.Add(sequence);
                    }

                    break;
                default:
                    return;
            }

            lastAcknowledged = GoTime.NowNanoseconds();
            Store.UpdateAcks(consumerSeq, streamSeq);
        }

        foreach (var sequence in acknowledged)
        {
            stream.OnAcknowledged(this, sequence);
        }

        if (wasFull || sampled)
        {
            Kick();
        }
    }

    /// <summary>nats-server <c>processNak</c>: redeliver now, or after the given delay.</summary>
    private void Nak(ulong streamSeq, ulong consumerSeq, ulong deliveryCount, ReadOnlySpan<byte> argument)
    {
        var text = Encoding.UTF8.GetString(argument).Trim();
        lock (gate)
        {
            if (closed || consumerSeq <= ackFloorConsumer || consumerSeq >= deliverySequence || !pending.TryGetValue(streamSeq, out var delivery))
            {
                return;
            }

            Advise("MSG_NAKED", "io.nats.jetstream.advisory.v1.nak", streamSeq, consumerSeq, deliveryCount);
            var delay = text.Length == 0 ? -1 : ParseNakDelay(text);
            if (delay >= 0)
            {
                // Due for redelivery when ack_wait would expire "delay" from now.
                RemoveFromRedeliverQueue(streamSeq);
                var due = GoTime.NowNanoseconds() - AckWait + delay;
                pending[streamSeq] = delivery with { Timestamp = due };
                Store.UpdateDelivered(delivery.ConsumerSequence, streamSeq, deliveryCount, due);
                SchedulePendingCheck(Math.Max(delay, 1_000_000));
            }
            else if (redeliverSet.Add(streamSeq))
            {
                redeliverQueue.Add(streamSeq);
            }
        }

        Kick();
    }

    /// <summary>A NAK delay: <c>{"delay":ns}</c> or a Go duration (<c>5s</c>); -1 (and a warning) when malformed.</summary>
    private long ParseNakDelay(string text)
    {
        if (text[0] == '{')
        {
            try
            {
                if (JsonSerializer.Deserialize(text, JetStreamJson.Context.NakOptions) is { } options)
                {
                    return Math.Max(options.Delay, 0);
                }
            }
            catch (JsonException)
            {
            }
        }
        else if (GoDuration.TryParse(text, out var parsed))
        {
            return parsed;
        }

        JetStreamLog.BadNakDelay(engine.Logger, stream.Name, Name, text);
        return -1;
    }

    /// <summary><c>+WPI</c>: the delivery's ack wait starts again.</summary>
    private void Progress(ulong streamSeq)
    {
        lock (gate)
        {
            if (pending.TryGetValue(streamSeq, out var delivery))
            {
                var now = GoTime.NowNanoseconds();
                pending[streamSeq] = delivery with { Timestamp = now };
                Store.UpdateDelivered(delivery.ConsumerSequence, streamSeq, redeliveries.GetValueOrDefault(streamSeq) + 1, now);
                RemoveFromRedeliverQueue(streamSeq);
            }
        }
    }

    private void RemoveFromRedeliverQueue(ulong sequence)
    {
        if (redeliverSet.Remove(sequence))
        {
            redeliverQueue.Remove(sequence);
        }
    }

    /// <summary>Arms the redelivery check (nats-server <c>ptmr</c>) to fire after <paramref name="nanoseconds"/>. Lock held.</summary>
    private void SchedulePendingCheck(long nanoseconds)
    {
        if (closed)
        {
            return;
        }

        pendingTimer ??= new Timer(static state => ((Consumer)state!).CheckPending(), this, Timeout.Infinite, Timeout.Infinite);
        pendingTimer.Change(TimeSpan.FromTicks(Math.Max(nanoseconds / 100, 10_000) + 10_000), Timeout.InfiniteTimeSpan);
        pendingTimerArmed = true;
    }

    /// <summary>nats-server <c>checkPending</c>: queues expired deliveries for redelivery and re-arms for the next.</summary>
    private void CheckPending()
    {
        var kick = false;
        lock (gate)
        {
            pendingTimerArmed = false;
            if (closed || pending.Count == 0)
            {
                return;
            }

            var now = GoTime.NowNanoseconds();
            var ackWait = AckWait;
            var backoff = config.BackOff;
            var next = backoff is { Count: > 0 } ? backoff[^1] : ackWait;
            var first = stream.Store.GetState().FirstSequence;
            List<ulong>? expired = null;
            foreach (var (sequence, delivery) in pending)
            {
                if (sequence < first)
                {
                    // Gone from the stream: nothing to wait for.
                    (expired ??= []).Add(sequence | (1UL << 63));
                    continue;
                }

                var deadline = ackWait;
                if (backoff is { Count: > 0 })
                {
                    var count = (int)Math.Min(redeliveries.GetValueOrDefault(sequence), (ulong)backoff.Count - 1);
                    deadline = backoff[count];
                    var following = backoff[Math.Min(count + 1, backoff.Count - 1)];
                    next = Math.Min(next, following);
                }

                var elapsed = now - delivery.Timestamp;
                if (elapsed >= deadline)
                {
                    if (!redeliverSet.Contains(sequence))
                    {
                        (expired ??= []).Add(sequence);
                    }
                }
                else
                {
                    next = Math.Min(next, deadline - elapsed);
                }
            }

            if (expired is not null)
            {
                expired.Sort();
                foreach (var entry in expired)
                {
                    if ((entry & (1UL << 63)) != 0)
                    {
                        var gone = entry & ~(1UL << 63);
                        pending.Remove(gone);
                        redeliveries.Remove(gone);
                        continue;
                    }

                    redeliverSet.Add(entry);
                    redeliverQueue.Add(entry);
                    pending[entry] = pending[entry] with { Timestamp = now };
                }

                kick = true;
            }

            if (pending.Count > 0)
            {
                SchedulePendingCheck(next);
            }
        }

        if (kick)
        {
            Kick();
        }
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
            if (messages != -1 || sequence == 0)
            {
                pendingCountValid = false;
                return;
            }

            if (matches && pendingCountValid && sequence >= streamSequence && sequence <= pendingCountThrough && pendingCount > 0)
            {
                pendingCount--;
            }

            if (pending.Remove(sequence, out var delivery))
            {
                redeliveries.Remove(sequence);
                RemoveFromRedeliverQueue(sequence);
                if (pending.Count == 0)
                {
                    ackFloorConsumer = deliverySequence - 1;
                    ackFloorStream = streamSequence - 1;
                }

                Store.UpdateAcks(delivery.ConsumerSequence, sequence);
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

            if (streamSequence < first)
            {
                streamSequence = first;
            }

            if (ackFloorStream < first)
            {
                ackFloorStream = first - 1;
                ackFloorConsumer = deliverySequence - 1;
            }

            pending.Clear();
            redeliverQueue.RemoveAll(s => s < streamSequence);
            redeliverSet.RemoveWhere(s => s < streamSequence);
            pendingCountValid = false;
            var state = new ConsumerState
            {
                Delivered = new SequencePair(deliverySequence - 1, streamSequence - 1),
                AckFloor = new SequencePair(ackFloorConsumer, ackFloorStream),
            };
            foreach (var (sequence, count) in redeliveries)
            {
                state.Redelivered[sequence] = count;
            }

            Store.Update(state);
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
            return config.AckPolicy switch
            {
                ConsumerAckPolicy.Explicit => sequence > ackFloorStream && (sequence >= streamSequence || pending.ContainsKey(sequence)),
                _ => sequence > ackFloorStream,
            };
        }
    }

    private void AdviseMaxDeliveries(ulong streamSeq, ulong deliveries) =>
        Advise("MAX_DELIVERIES", "io.nats.jetstream.advisory.v1.max_deliver", streamSeq, 0, deliveries);

    /// <summary>
    /// Queues a consumer advisory for <c>$JS.EVENT.ADVISORY.CONSUMER.&lt;kind&gt;.&lt;stream&gt;.&lt;consumer&gt;</c> when someone
    /// listens (sent by the delivery runner). Lock held.
    /// </summary>
    private void Advise(string kind, string type, ulong streamSeq, ulong consumerSeq, ulong deliveries)
    {
        var subject = Encoding.UTF8.GetBytes($"$JS.EVENT.ADVISORY.CONSUMER.{kind}.{stream.Name}.{Name}");
        if (engine.Interest?.HasInterest(subject) == false)
        {
            return;
        }

        var json = new StringBuilder();
        json.Append("{\"type\":\"").Append(type).Append("\",\"id\":\"").Append(Guid.NewGuid().ToString("N")).Append("\",\"timestamp\":\"")
            .Append(GoTime.Format(GoTime.NowNanoseconds())).Append("\",\"stream\":").Append(JsonSerializer.Serialize(stream.Name, JetStreamJson.Context.String))
            .Append(",\"consumer\":").Append(JsonSerializer.Serialize(Name, JetStreamJson.Context.String));
        if (consumerSeq != 0)
        {
            json.Append(",\"consumer_seq\":").Append(consumerSeq);
        }

        json.Append(",\"stream_seq\":").Append(streamSeq).Append(",\"deliveries\":").Append(deliveries).Append('}');
        outbox.Enqueue(new Outgoing(subject, null, [], Encoding.UTF8.GetBytes(json.ToString())));
    }
}
