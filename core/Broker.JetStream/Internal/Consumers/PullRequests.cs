using System.Buffers.Text;
using System.Text;
using System.Text.Json;
using Broker.Abstractions;
using Broker.JetStream.Internal.Json;
using Broker.JetStream.Internal.Models;

namespace Broker.JetStream.Internal.Consumers;

/// <summary>
/// The pull front end (nats-server <c>processNextMsgRequest</c>, <c>nextWaiting</c>, <c>processWaiting</c>): requests on
/// <c>$JS.API.CONSUMER.MSG.NEXT</c> with a batch size or <c>{batch, expires, max_bytes, no_wait, idle_heartbeat}</c> (and
/// 2.11's <c>group</c>, <c>min_pending</c>, <c>min_ack_pending</c>, <c>id</c>, see <see cref="ConsumerPriority"/>),
/// validated against the consumer's limits and kept in the wait queue. Messages go to a request's reply subject;
/// status messages tell the client why a request ended (<c>404 No Messages</c>, <c>408 Request Timeout</c>,
/// <c>409 ...</c>) or that it is still alive (<c>100 Idle Heartbeat</c>). Guarded by the consumer's lock.
/// </summary>
internal sealed class PullRequests
{
    private readonly WaitQueue waiting;
    private readonly ISubjectInterest? interest;
    private readonly ConsumerOutbox outbox;
    private readonly Func<bool> nothingPending;
    private readonly IConsumerTimers timers;
    private ConsumerConfig config;
    private Timer? waitTimer;
    private bool stopped;

    /// <param name="config">The consumer's configuration (max_waiting and the request limits).</param>
    /// <param name="interest">Whether a requester still listens on its reply subject (none: always).</param>
    /// <param name="outbox">Where status replies go.</param>
    /// <param name="nothingPending">Whether nothing is there to deliver now (a no-wait request is then answered at once); asked only for those.</param>
    /// <param name="timers">Called by the wait timer, without the lock; the consumer takes its lock and calls <see cref="OnTimer"/>.</param>
    public PullRequests(ConsumerConfig config, ISubjectInterest? interest, ConsumerOutbox outbox, Func<bool> nothingPending, IConsumerTimers timers)
    {
        this.config = config;
        this.interest = interest;
        this.outbox = outbox;
        this.nothingPending = nothingPending;
        this.timers = timers;
        waiting = new WaitQueue(config.MaxWaiting);
    }

    /// <summary>Requests waiting (<c>num_waiting</c>).</summary>
    public int Count => waiting.Count;

    /// <summary>When the last request arrived or was served (ns since the Unix epoch), for inactivity.</summary>
    public long LastRequest
    {
        get => waiting.LastRequest;
        set => waiting.LastRequest = value;
    }

    /// <summary>Takes a new configuration (a consumer update): limits and max_waiting.</summary>
    public void Configure(ConsumerConfig updated)
    {
        config = updated;
        waiting.Capacity = updated.MaxWaiting;
    }

    /// <summary>
    /// A request arrived: validated against the limits and queued (arming the wait timer), or answered with a status
    /// (nats-server <c>processNextMsgRequest</c>); a JSON request's priority fields are checked against the consumer's
    /// priority groups (<paramref name="priority"/>, null for none). A full queue first makes room by answering expired requests.
    /// </summary>
    public void Add(byte[] reply, ReadOnlySpan<byte> body, long now, SequencePair lastDelivered, ConsumerPriority? priority = null)
    {
        if (!TryParse(body, out var batch, out var expires, out var maxBytes, out var noWait, out var heartbeat, out var error, out var group))
        {
            outbox.Status(reply, 400, "Bad Request - " + error);
            return;
        }

        if (config.MaxRequestBatch > 0 && batch > config.MaxRequestBatch)
        {
            outbox.Status(reply, 409, $"Exceeded MaxRequestBatch of {config.MaxRequestBatch}");
            return;
        }

        if (expires > 0 && config.MaxRequestExpires > 0 && expires > config.MaxRequestExpires)
        {
            outbox.Status(reply, 409, "Exceeded MaxRequestExpires of " + ConfigSyntax.FormatDuration(config.MaxRequestExpires));
            return;
        }

        if (maxBytes > 0 && config.MaxRequestMaxBytes > 0 && maxBytes > config.MaxRequestMaxBytes)
        {
            outbox.Status(reply, 409, $"Exceeded MaxRequestMaxBytes of {config.MaxRequestMaxBytes}");
            return;
        }

        if (group is not null && ConsumerPriority.Check(config, priority, group) is { } refused)
        {
            outbox.Status(reply, refused.Code, refused.Text);
            return;
        }

        waiting.LastRequest = now;
        if (waiting.IsFull)
        {
            Expire(now, lastDelivered);
        }

        if (noWait && expires == 0 && nothingPending())
        {
            outbox.Status(reply, "NATS/1.0 404 No Messages\r\n\r\n"u8);
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
            Priority = group,
        };
        if (!waiting.TryAdd(request))
        {
            outbox.Status(reply, 409, "Exceeded MaxWaiting");
            return;
        }

        ScheduleCheck();
    }

    /// <summary>
    /// The request to deliver to next: the first whose requester is still there, after answering expired ones
    /// (nats-server <c>nextWaiting</c>), and that the consumer's priority groups admit (those that must wait go to the
    /// back, once each; those holding a pin that is no longer current are answered 423).
    /// </summary>
    public WaitingRequest? Next(long now, ConsumerPriority? priority = null)
    {
        var waited = 0;
        while (waiting.Head is { } head)
        {
            if (head.Expires != 0 && now >= head.Expires)
            {
                PendingStatus(head, "408 Request Timeout");
                waiting.Remove(head);
                continue;
            }

            if (interest?.HasInterest(head.Reply) == false)
            {
                // The requester went away: nobody to tell.
                waiting.Remove(head);
                continue;
            }

            switch (priority?.Admit(head) ?? PullAdmission.Deliver)
            {
                case PullAdmission.Wait:
                    waiting.Cycle();
                    if (++waited >= waiting.Count)
                    {
                        return null;
                    }

                    continue;
                case PullAdmission.Refuse:
                    outbox.Status(head.Reply, "NATS/1.0 423 Nats-Wrong-Pin-Id\r\n\r\n"u8);
                    waiting.Remove(head);
                    continue;
            }

            return head;
        }

        return null;
    }

    /// <summary>Charges a message to a request's <c>max_bytes</c>; answers 409 and drops the request when it cannot hold it.</summary>
    public bool Charge(WaitingRequest request, int size)
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
        waiting.Remove(request);
        return false;
    }

    /// <summary>A message went to <paramref name="request"/> at <paramref name="now"/>: one fewer wanted, its heartbeat clock restarts.</summary>
    public void AfterDelivery(WaitingRequest request, long now)
    {
        request.Remaining--;
        request.Delivered++;
        if (request.Heartbeat > 0)
        {
            request.NextHeartbeat = GoTime.NowNanoseconds() + request.Heartbeat;
        }

        waiting.AfterDelivery(request);
        waiting.LastRequest = now;
    }

    /// <summary>
    /// Nothing is deliverable now: no-wait requests end with <c>404 No Messages</c> (those with an expiry that got
    /// nothing keep waiting).
    /// </summary>
    public void EndOfStream()
    {
        foreach (var candidate in waiting.All.ToList())
        {
            if (candidate.NoWait && (candidate.Expires == 0 || candidate.Delivered > 0))
            {
                outbox.Status(candidate.Reply, "NATS/1.0 404 No Messages\r\n\r\n"u8);
                waiting.Remove(candidate);
            }
        }
    }

    /// <summary>
    /// The consumer is paused (nats-server's delivery loop waits): expired requests at the head end with 408, no-wait
    /// requests with 404 (as at the end of the stream); the others wait.
    /// </summary>
    public void WhilePaused(long now)
    {
        Next(now);
        EndOfStream();
    }

    /// <summary>Answers expired requests and sends due heartbeats; returns the next time something is due (0 for none).</summary>
    public long Expire(long now, SequencePair lastDelivered)
    {
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
                outbox.Enqueue(new ControlMessage(request.Reply, null, ConsumerOutbox.IdleHeartbeat(lastDelivered, stalled: null)));
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

    /// <summary>The wait timer fired: expiries and heartbeats, then the timer for the next.</summary>
    public void OnTimer(long now, SequencePair lastDelivered)
    {
        Expire(now, lastDelivered);
        ScheduleCheck();
    }

    /// <summary>Stops the wait timer; requests still waiting are told, as nats-server tells them, <c>409 Consumer Deleted</c>.</summary>
    public void Stop()
    {
        stopped = true;
        waitTimer?.Dispose();
        foreach (var request in waiting.Drain())
        {
            outbox.Status(request.Reply, "NATS/1.0 409 Consumer Deleted\r\n\r\n"u8);
        }
    }

    /// <summary>nats-server <c>nextReqFromMsg</c>: empty (batch 1), a number, or the JSON request.</summary>
    internal static bool TryParse(ReadOnlySpan<byte> body, out int batch, out long expires, out long maxBytes, out bool noWait, out long heartbeat, out string error, out PullPriority? priority)
    {
        priority = null;
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
            NextRequest? request;
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

            // 2.11: every JSON request has priority fields (empty when not given).
            priority = new PullPriority { Group = request.Group, MinPending = request.MinPending, MinAckPending = request.MinAckPending, Id = request.Id };
            return true;
        }

        if (Utf8Parser.TryParse(trimmed, out int number, out var used) && used == trimmed.Length)
        {
            batch = Math.Max(number, 1);
        }

        return true;
    }

    /// <summary>Arms the timer for the earliest request expiry or heartbeat.</summary>
    private void ScheduleCheck()
    {
        if (stopped)
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

        waitTimer ??= new Timer(static state => ((IConsumerTimers)state!).OnFrontEndDue(), timers, Timeout.Infinite, Timeout.Infinite);
        waitTimer.Change(TimeSpan.FromTicks(Math.Max(0, next - now) / 100 + 10_000), Timeout.InfiniteTimeSpan);
    }

    /// <summary>A status with the request's remaining messages and bytes (<c>Nats-Pending-Messages</c>, <c>Nats-Pending-Bytes</c>).</summary>
    private void PendingStatus(WaitingRequest request, string status)
    {
        var text = $"NATS/1.0 {status}\r\nNats-Pending-Messages: {request.Remaining}\r\nNats-Pending-Bytes: {request.BytesLeft}\r\n\r\n";
        outbox.Enqueue(new ControlMessage(request.Reply, null, Encoding.ASCII.GetBytes(text)));
    }
}
