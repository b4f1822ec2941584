using System.Buffers;
using System.Buffers.Text;
using System.Globalization;
using System.Text;
using System.Text.Json;
using Broker.Abstractions;
using Broker.JetStream.Internal.Json;

namespace Broker.JetStream.Internal.Consumers;

/// <summary>
/// Pull requests (nats-server <c>processNextMsgRequest</c>, <c>processWaiting</c>): <c>$JS.API.CONSUMER.MSG.NEXT</c> with
/// a batch size or <c>{batch, expires, max_bytes, no_wait, idle_heartbeat}</c>. Messages go to the request's reply
/// subject; status messages tell the client why a request ended (<c>404 No Messages</c>, <c>408 Request Timeout</c>,
/// <c>409 ...</c>) or that it is still alive (<c>100 Idle Heartbeat</c>).
/// </summary>
internal sealed partial class Consumer
{
    private readonly WaitQueue? waiting;
    private Timer? waitTimer;
    private bool blockedByAckPending;

    private void OnNextRequest(in BusMessage message)
    {
        if (message.ReplyTo.IsEmpty)
        {
            return;
        }

        var body = message.Payload.IsSingleSegment ? message.Payload.FirstSpan : message.Payload.ToArray();
        OnNextRequest(message.ReplyTo, body);
    }

    private void OnNextRequest(ReadOnlySpan<byte> replySpan, ReadOnlySpan<byte> body)
    {
        var reply = replySpan.ToArray();
        lock (gate)
        {
            if (closed)
            {
                return;
            }

            AddRequest(reply, body);
        }

        Kick();
    }

    /// <summary>Validates a pull request and queues it, or answers it with a status. Lock held.</summary>
    private void AddRequest(byte[] reply, ReadOnlySpan<byte> body)
    {
        if (config.IsPush || waiting is null)
        {
            outbox.Enqueue(Outgoing.Status(reply, "NATS/1.0 409 Consumer is push based\r\n\r\n"u8));
            return;
        }

        if (!TryParseRequest(body, out var batch, out var expires, out var maxBytes, out var noWait, out var heartbeat, out var error))
        {
            Status(reply, 400, "Bad Request - " + error);
            return;
        }

        if (config.MaxRequestBatch > 0 && batch > config.MaxRequestBatch)
        {
            Status(reply, 409, $"Exceeded MaxRequestBatch of {config.MaxRequestBatch}");
            return;
        }

        if (expires > 0 && config.MaxRequestExpires > 0 && expires > config.MaxRequestExpires)
        {
            Status(reply, 409, "Exceeded MaxRequestExpires of " + GoDuration.Format(config.MaxRequestExpires));
            return;
        }

        if (maxBytes > 0 && config.MaxRequestMaxBytes > 0 && maxBytes > config.MaxRequestMaxBytes)
        {
            Status(reply, 409, $"Exceeded MaxRequestMaxBytes of {config.MaxRequestMaxBytes}");
            return;
        }

        var now = GoTime.NowNanoseconds();
        waiting.LastRequest = now;
        if (waiting.IsFull)
        {
            ExpireRequests(now);
        }

        if (noWait && expires == 0 && NumPendingLocked() + (ulong)redeliverQueue.Count == 0)
        {
            outbox.Enqueue(Outgoing.Status(reply, "NATS/1.0 404 No Messages\r\n\r\n"u8));
            return;
        }

        var request = new WaitingRequest
        {
            Reply = reply,
            Remaining = batch,
            BytesLeft = maxBytes,
            Expires = expires > 0 ? now + expires : 0,
            Heartbeat = heartbeat,
            NextHeartbeat = heartbeat > 0 ? now + heartbeat : 0,
            NoWait = noWait,
        };
        if (!waiting.TryAdd(request))
        {
            Status(reply, 409, "Exceeded MaxWaiting");
            return;
        }

        ScheduleWaitCheck();
    }

    /// <summary>nats-server <c>nextReqFromMsg</c>: empty (batch 1), a number, or the JSON request.</summary>
    private static bool TryParseRequest(ReadOnlySpan<byte> body, out int batch, out long expires, out long maxBytes, out bool noWait, out long heartbeat, out string error)
    {
        batch = 1;
        expires = maxBytes = heartbeat = 0;
        noWait = false;
        error = "";
        var trimmed = body.Trim(" \t\r\n"u8);
        if (trimmed.IsEmpty)
        {
            return true;
        }

        if (trimmed[0] == (byte)'{')
        {
            Models.NextRequest? request;
            try
            {
                request = JsonSerializer.Deserialize(trimmed, JetStreamJson.Context.NextRequest);
            }
            catch (JsonException ex)
            {
                error = ex.Message;
                return false;
            }

            if (request is null)
            {
                return true;
            }

            if (request.Heartbeat > 0 && request.Heartbeat * 2 > request.Expires)
            {
                error = "heartbeat value too large";
                return false;
            }

            batch = request.Batch > 0 ? request.Batch : 1;
            expires = Math.Max(request.Expires, 0);
            maxBytes = Math.Max(request.MaxBytes, 0);
            noWait = request.NoWait;
            heartbeat = Math.Max(request.Heartbeat, 0);
            return true;
        }

        if (Utf8Parser.TryParse(trimmed, out int number, out var used) && used == trimmed.Length)
        {
            batch = Math.Max(number, 1);
        }

        return true;
    }

    /// <summary>
    /// The request to deliver to next: the first whose subscriber is still there, after answering expired ones
    /// (nats-server <c>nextWaiting</c>). Lock held.
    /// </summary>
    private WaitingRequest? NextWaiting()
    {
        if (waiting is null)
        {
            return null;
        }

        var now = GoTime.NowNanoseconds();
        while (waiting.Head is { } head)
        {
            if (head.Expires != 0 && now >= head.Expires)
            {
                PendingStatus(head, "408 Request Timeout");
                waiting.Remove(head);
                continue;
            }

            if (engine.Interest?.HasInterest(head.Reply) == false)
            {
                // The requester went away: nobody to tell.
                waiting.Remove(head);
                continue;
            }

            return head;
        }

        return null;
    }

    /// <summary>Charges a message to a request's <c>max_bytes</c>; answers 409 and drops the request when it cannot hold it. Lock held.</summary>
    private bool TakeForRequest(WaitingRequest request, int size)
    {
        if (request.BytesLeft <= 0)
        {
            return true;
        }

        if (size <= request.BytesLeft)
        {
            request.BytesLeft -= size;
            if (request.BytesLeft == 0)
            {
                request.Remaining = 1;
            }

            return true;
        }

        PendingStatus(request, "409 Message Size Exceeds MaxBytes");
        waiting!.Remove(request);
        return false;
    }

    private void AfterPullDelivery(WaitingRequest request)
    {
        request.Remaining--;
        request.Delivered++;
        if (request.Heartbeat > 0)
        {
            request.NextHeartbeat = GoTime.NowNanoseconds() + request.Heartbeat;
        }

        waiting!.AfterDelivery(request);
        waiting.LastRequest = lastDelivered;
    }

    /// <summary>
    /// Nothing is deliverable now: no-wait requests end with <c>404 No Messages</c> (those with an expiry that got
    /// nothing keep waiting), unless it is only max ack pending holding messages back. Lock held.
    /// </summary>
    private void EndOfStreamFor(WaitingRequest request)
    {
        if (waiting is null || blockedByAckPending)
        {
            return;
        }

        foreach (var candidate in waiting.All.ToList())
        {
            if (candidate.NoWait && (candidate.Expires == 0 || candidate.Delivered > 0))
            {
                outbox.Enqueue(Outgoing.Status(candidate.Reply, "NATS/1.0 404 No Messages\r\n\r\n"u8));
                waiting.Remove(candidate);
            }
        }

        _ = request;
    }

    /// <summary>Answers expired requests and sends due heartbeats; returns the next time something is due (0 for none). Lock held.</summary>
    private long ExpireRequests(long now)
    {
        if (waiting is null)
        {
            return 0;
        }

        long next = 0;
        foreach (var request in waiting.All.ToList())
        {
            if (request.Expires != 0 && now >= request.Expires)
            {
                PendingStatus(request, "408 Request Timeout");
                waiting.Remove(request);
                continue;
            }

            if (request.Heartbeat > 0 && now >= request.NextHeartbeat)
            {
                outbox.Enqueue(Outgoing.Status(request.Reply, IdleHeartbeatHeaders(includeStall: false)));
                request.NextHeartbeat = now + request.Heartbeat;
            }

            foreach (var due in (ReadOnlySpan<long>)[request.Expires, request.Heartbeat > 0 ? request.NextHeartbeat : 0])
            {
                if (due != 0 && (next == 0 || due < next))
                {
                    next = due;
                }
            }
        }

        return next;
    }

    /// <summary>Arms the timer for the earliest request expiry or heartbeat. Lock held.</summary>
    private void ScheduleWaitCheck()
    {
        if (waiting is null || closed)
        {
            return;
        }

        var now = GoTime.NowNanoseconds();
        long next = 0;
        foreach (var request in waiting.All)
        {
            foreach (var due in (ReadOnlySpan<long>)[request.Expires, request.Heartbeat > 0 ? request.NextHeartbeat : 0])
            {
                if (due != 0 && (next == 0 || due < next))
                {
                    next = due;
                }
            }
        }

        if (next == 0)
        {
            return;
        }

        waitTimer ??= new Timer(static state => ((Consumer)state!).OnWaitTimer(), this, Timeout.Infinite, Timeout.Infinite);
        waitTimer.Change(TimeSpan.FromTicks(Math.Max(0, next - now) / 100 + 10_000), Timeout.InfiniteTimeSpan);
    }

    private void OnWaitTimer()
    {
        lock (gate)
        {
            if (closed)
            {
                return;
            }

            ExpireRequests(GoTime.NowNanoseconds());
            ScheduleWaitCheck();
        }

        Kick();
    }

    /// <summary>A status with the request's remaining messages and bytes (<c>Nats-Pending-Messages</c>, <c>Nats-Pending-Bytes</c>). Lock held.</summary>
    private void PendingStatus(WaitingRequest request, string status)
    {
        var text = $"NATS/1.0 {status}\r\nNats-Pending-Messages: {request.Remaining}\r\nNats-Pending-Bytes: {request.BytesLeft}\r\n\r\n";
        outbox.Enqueue(new Outgoing(request.Reply, null, Encoding.ASCII.GetBytes(text)));
    }

    private void Status(byte[] reply, int code, string description) =>
        outbox.Enqueue(new Outgoing(reply, null, Encoding.UTF8.GetBytes($"NATS/1.0 {code.ToString(CultureInfo.InvariantCulture)} {description}\r\n\r\n")));
}
