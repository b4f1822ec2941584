using System.Buffers;
using System.Buffers.Text;
using Broker.Abstractions;
using Broker.JetStream.Internal.Json;

namespace Broker.JetStream.Internal.Consumers;

/// <summary>
/// Delivery (nats-server <c>loopAndGatherMsgs</c>, <c>getNextMsg</c>, <c>deliverMsg</c>). Whoever has a reason to
/// deliver (a new message, a pull request, an acknowledgement freeing room, a timer) calls <see cref="Kick"/>; one
/// caller at a time becomes the runner and sends, on its own thread, until nothing is deliverable, so a message
/// published while a consumer waits reaches it without a thread hop. A runner hands off to the thread pool after a
/// batch, so no publisher's thread is kept for long. Each send is prepared under the lock into buffers only the runner
/// uses (the loaded message, the ack subject) and published after the lock is released; control messages (status
/// replies, heartbeats, flow control) queue in the outbox and go out through the same runner, in order.
/// </summary>
internal sealed partial class Consumer
{
    private const int RunnerBatch = 256;

    private readonly Queue<Outgoing> outbox = new();
    private readonly StoredMessage scratch = new();
    private readonly List<IBusSubscription> subscriptions = [];
    private byte[] ackBuffer = new byte[256];
    private ArrayBufferWriter<byte>? headersOnlyBuffer;
    private int running;
    private int rerun;

    /// <summary>A control message: status headers (and maybe a reply) to a subject, or an advisory's JSON.</summary>
    private readonly record struct Outgoing(byte[] Subject, byte[]? Reply, byte[] Headers, byte[]? Payload = null)
    {
        public static Outgoing Status(byte[] subject, ReadOnlySpan<byte> headers, byte[]? reply = null) => new(subject, reply, headers.ToArray());
    }

    /// <summary>What the runner sends next.</summary>
    private ref struct Send
    {
        public ReadOnlySpan<byte> Subject;
        public ReadOnlySpan<byte> DeliverAs;
        public ReadOnlySpan<byte> Reply;
        public ReadOnlySequence<byte> Headers;
        public ReadOnlySequence<byte> Payload;
        public ulong RemoveAfter;
    }

    /// <summary>Asks for delivery; runs it on this thread unless a runner is already at work.</summary>
    public void Kick()
    {
        if (Interlocked.Exchange(ref running, 1) != 0)
        {
            Volatile.Write(ref rerun, 1);
            return;
        }

        Run();
    }

    /// <summary>Sends queued control messages (used when stopping: no data follows).</summary>
    private void FlushOutbox() => Kick();

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
                JetStreamLog.DeliveryFailed(engine.Logger, stream.Name, Name, ex);
                more = false;
            }

            if (more)
            {
                // A full batch: continue on the pool, keeping the runner role.
                ThreadPool.UnsafeQueueUserWorkItem(static consumer => consumer.Run(), this, preferLocal: false);
                return;
            }

            Volatile.Write(ref running, 0);
            if (Volatile.Read(ref rerun) == 0 || Interlocked.Exchange(ref running, 1) != 0)
            {
                return;
            }
        }
    }

    /// <summary>Sends up to a batch; true when the batch filled (more may be deliverable).</summary>
    private bool SendBatch()
    {
        for (var i = 0; i < RunnerBatch; i++)
        {
            var send = default(Send);
            lock (gate)
            {
                if (!TryTake(ref send))
                {
                    return false;
                }
            }

            if (send.DeliverAs.IsEmpty)
            {
                Client.Publish(send.Subject, send.Reply, send.Headers, send.Payload);
            }
            else
            {
                // The stored message keeps its own subject, routed to the deliver subject or the request's inbox.
                Client.Publish(send.Subject, send.DeliverAs, send.Reply, send.Headers, send.Payload);
            }

            if (send.RemoveAfter != 0)
            {
                // Ack none on an interest or work-queue stream: delivered is done.
                stream.OnAcknowledged(this, send.RemoveAfter);
            }
        }

        return true;
    }

    /// <summary>Picks the next send: a control message, else the next deliverable message. Lock held.</summary>
    private bool TryTake(ref Send send)
    {
        if (outbox.TryDequeue(out var control))
        {
            send.Subject = control.Subject;
            send.Reply = control.Reply;
            send.Headers = new ReadOnlySequence<byte>(control.Headers);
            send.Payload = control.Payload is null ? ReadOnlySequence<byte>.Empty : new ReadOnlySequence<byte>(control.Payload);
            return true;
        }

        if (closed)
        {
            return false;
        }

        byte[] target;
        WaitingRequest? request = null;
        if (config.IsPush)
        {
            if (!PushCanDeliver())
            {
                CheckReplayCaughtUp();
                return false;
            }

            target = deliverSubject;
        }
        else
        {
            request = NextWaiting();
            if (request is null)
            {
                CheckReplayCaughtUp();
                return false;
            }

            target = request.Reply;
        }

        if (HeldNotDue())
        {
            // A paced message waits for its time; the pace timer kicks the runner then (Consumer.Pacing.cs).
            return false;
        }

        var fromHeld = heldSequence != 0;
        var replayDone = false;
        var deliveryCount = fromHeld ? TakeHeld(out replayDone) : 0;
        if (deliveryCount == 0)
        {
            fromHeld = false;
            replayDone = false;
            deliveryCount = NextMessage();
        }

        if (deliveryCount == 0)
        {
            CheckReplayCaughtUp();
            if (request is not null)
            {
                // Nothing more to deliver now: a no-wait request ends here.
                EndOfStreamFor(request);
                if (outbox.TryDequeue(out control))
                {
                    send.Subject = control.Subject;
                    send.Reply = control.Reply;
                    send.Headers = new ReadOnlySequence<byte>(control.Headers);
                    send.Payload = ReadOnlySequence<byte>.Empty;
                    return true;
                }
            }

            return false;
        }

        var message = scratch;
        var counted = !fromHeld && deliveryCount == 1 && pendingCountValid && pendingCount > 0 && message.Sequence <= pendingCountThrough;
        if (counted)
        {
            // Counted off when taken, as nats-server does before any pacing wait: a held message is no longer pending.
            pendingCount--;
        }

        // nats-server charges the same size to a pull request's max_bytes, the rate limit and flow control.
        var size = DeliverySize(deliveryCount, NumPendingLocked());
        if (MustWait(deliveryCount, rateBytesPerSecond > 0 ? size : 0, replayDone))
        {
            return false;
        }

        if (request is not null && !TakeForRequest(request, size))
        {
            // Too big for the request's max_bytes: the request was answered with 409 and the message goes back.
            pendingCount += counted ? 1UL : 0UL;
            UndoTake(message.Sequence, deliveryCount);
            return TryTake(ref send);
        }

        var consumerSequence = deliverySequence++;
        var now = GoTime.NowNanoseconds();

        var ackLength = FormatAckSubject(deliveryCount, message.Sequence, consumerSequence, message.Timestamp, NumPendingLocked());
        TrackDelivered(message.Sequence, consumerSequence, deliveryCount, now, ref send);
        if (config.IsPush)
        {
            AfterPushDelivery(size);
        }
        else
        {
            AfterPullDelivery(request!);
        }

        send.Subject = target;
        send.DeliverAs = message.Subject.Span;
        send.Reply = ackBuffer.AsSpan(0, ackLength);
        if (config.HeadersOnly)
        {
            send.Headers = HeadersOnly(message);
            send.Payload = ReadOnlySequence<byte>.Empty;
        }
        else
        {
            send.Headers = new ReadOnlySequence<byte>(message.Headers);
            send.Payload = new ReadOnlySequence<byte>(message.Payload);
        }

        return true;
    }

    /// <summary>
    /// Loads the next message to deliver into the scratch message: a redelivery first, then the last-per-subject
    /// list, then the next match at the stream sequence (unless max ack pending is reached). Returns its delivery count,
    /// 0 when nothing is deliverable. Lock held.
    /// </summary>
    private ulong NextMessage()
    {
        while (redeliverQueue.Count > 0)
        {
            var sequence = redeliverQueue[0];
            redeliverQueue.RemoveAt(0);
            redeliverSet.Remove(sequence);
            var count = redeliveries[sequence] = redeliveries.GetValueOrDefault(sequence) + 1;
            var deliveryCount = count + 1;
            if (config.MaxDeliver > 0 && deliveryCount > (ulong)config.MaxDeliver)
            {
                if (deliveryCount == (ulong)config.MaxDeliver + 1)
                {
                    AdviseMaxDeliveries(sequence, deliveryCount - 1);
                }

                pending.Remove(sequence);
                continue;
            }

            if (stream.Store.Load(sequence, scratch) == LoadStatus.Found)
            {
                return deliveryCount;
            }

            // Gone from the stream meanwhile: nothing to redeliver.
            pending.Remove(sequence);
            redeliveries.Remove(sequence);
        }

        if (skipList is { } lasts)
        {
            while (skipIndex < lasts.Length)
            {
                var sequence = lasts[skipIndex++];
                if (skipIndex == lasts.Length)
                {
                    streamSequence = skipResume + 1;
                    skipList = null;
                }

                if (stream.Store.Load(sequence, scratch) == LoadStatus.Found)
                {
                    return 1;
                }
            }
        }

        blockedByAckPending = config.MaxAckPending > 0 && pending.Count >= config.MaxAckPending;
        if (blockedByAckPending)
        {
            return 0;
        }

        var status = LoadNextMatch(streamSequence, out var scanned);
        if (scanned >= streamSequence)
        {
            streamSequence = scanned + 1;
        }

        return status == LoadStatus.Found ? 1UL : 0UL;
    }

    /// <summary>The first message at or after <paramref name="start"/> matching any filter, into the scratch message.</summary>
    private LoadStatus LoadNextMatch(ulong start, out ulong scanned)
    {
        var current = filters;
        if (current.Length <= 1)
        {
            return stream.Store.LoadNext(current.Length == 0 ? default : current[0], start, scratch, out scanned);
        }

        // Several filters: the nearest match of any.
        ulong best = 0;
        scanned = 0;
        foreach (var filter in current)
        {
            if (stream.Store.LoadNext(filter, start, scratch, out var found) == LoadStatus.Found && (best == 0 || found < best))
            {
                best = found;
            }

            scanned = Math.Max(scanned, found);
        }

        if (best == 0)
        {
            return LoadStatus.EndOfStream;
        }

        scanned = best;
        return stream.Store.Load(best, scratch);
    }

    /// <summary>Puts back a message taken for a request that could not hold it. Lock held.</summary>
    private void UndoTake(ulong sequence, ulong deliveryCount)
    {
        if (deliveryCount > 1)
        {
            redeliveries[sequence] = deliveryCount - 2;
            if (redeliveries[sequence] == 0)
            {
                redeliveries.Remove(sequence);
            }

            redeliverQueue.Insert(0, sequence);
            redeliverSet.Add(sequence);
        }
        else if (sequence < streamSequence)
        {
            streamSequence = sequence;
        }
    }

    /// <summary>Records a delivery: pending entry (or ack floor for ack none), store, activity time. Lock held.</summary>
    private void TrackDelivered(ulong sequence, ulong consumerSequence, ulong deliveryCount, long now, ref Send send)
    {
        if (config.AckPolicy == ConsumerAckPolicy.None)
        {
            ackFloorConsumer = consumerSequence;
            ackFloorStream = sequence;
            if (stream.Config.Retention != RetentionPolicy.Limits)
            {
                send.RemoveAfter = sequence;
            }
        }
        else
        {
            pending[sequence] = pending.TryGetValue(sequence, out var existing)
                ? existing with { Timestamp = now }
                : new PendingDelivery(consumerSequence, now);
            if (pendingTimer is null || !pendingTimerArmed)
            {
                SchedulePendingCheck(AckWait);
            }
        }

        lastDelivered = now;
        Store.UpdateDelivered(consumerSequence, sequence, deliveryCount, now);
    }

    /// <summary>Formats <c>$JS.ACK.&lt;stream&gt;.&lt;consumer&gt;.&lt;dc&gt;.&lt;sseq&gt;.&lt;dseq&gt;.&lt;ts&gt;.&lt;pending&gt;</c> into the ack buffer.</summary>
    private int FormatAckSubject(ulong deliveryCount, ulong streamSeq, ulong consumerSeq, long timestamp, ulong numPending)
    {
        if (ackBuffer.Length < ackPrefix.Length + 110)
        {
            ackBuffer = new byte[ackPrefix.Length + 128];
        }

        var span = ackBuffer.AsSpan();
        ackPrefix.CopyTo(span);
        var length = ackPrefix.Length;
        length += Number(span[length..], deliveryCount);
        length += Number(span[length..], streamSeq);
        length += Number(span[length..], consumerSeq);
        Utf8Formatter.TryFormat(timestamp, span[length..], out var written);
        length += written;
        span[length++] = (byte)'.';
        Utf8Formatter.TryFormat(numPending, span[length..], out written);
        return length + written;

        static int Number(Span<byte> destination, ulong value)
        {
            Utf8Formatter.TryFormat(value, destination, out var count);
            destination[count] = (byte)'.';
            return count + 1;
        }
    }

    /// <summary><c>headers_only</c>: the message's headers plus <c>Nats-Msg-Size</c>, without the payload.</summary>
    private ReadOnlySequence<byte> HeadersOnly(StoredMessage message)
    {
        var writer = headersOnlyBuffer ??= new ArrayBufferWriter<byte>(256);
        writer.ResetWrittenCount();
        var existing = message.Headers.Span;
        writer.Write(existing.IsEmpty ? "NATS/1.0\r\n"u8 : existing[..^2]);
        writer.Write("Nats-Msg-Size: "u8);
        Span<byte> number = stackalloc byte[20];
        Utf8Formatter.TryFormat(message.Payload.Length, number, out var written);
        writer.Write(number[..written]);
        writer.Write("\r\n\r\n"u8);
        return new ReadOnlySequence<byte>(writer.WrittenMemory);
    }

    /// <summary>Tells the consumer a matching message was stored (after the stream released its lock).</summary>
    public void OnNewMessage(ulong sequence)
    {
        lock (gate)
        {
            if (closed)
            {
                return;
            }

            if (pendingCountValid && sequence > pendingCountThrough)
            {
                pendingCount++;
                pendingCountThrough = sequence;
            }

            if (sequence < streamSequence || !HasDemand())
            {
                return;
            }
        }

        Kick();
    }

    /// <summary>Whether someone is there to deliver to: an active push subscriber or a waiting pull request. Lock held.</summary>
    private bool HasDemand() => config.IsPush ? pushActive : waiting is { Count: > 0 };
}
