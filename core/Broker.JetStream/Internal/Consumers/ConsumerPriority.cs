using System.Buffers;
using System.Text;
using Broker.Core.Internal.Events;
using Broker.JetStream.Internal.Json;
using Broker.JetStream.Internal.Models;

namespace Broker.JetStream.Internal.Consumers;

/// <summary>
/// A pull consumer's priority groups (nats-server 2.11, ADR-42): which waiting request may take the next message under
/// its <c>priority_policy</c>. <c>overflow</c>: a request naming <c>min_pending</c> or <c>min_ack_pending</c> gets
/// messages only while the consumer has at least that many pending (or awaiting acknowledgement). <c>pinned_client</c>:
/// the first request served gets a pin id, which every message it gets carries in <c>Nats-Pin-Id</c>; from then on only
/// requests with that id are served (others without an id wait, others with another id are answered 423), until the pin
/// holder sends no request for <c>priority_timeout</c> or <c>$JS.API.CONSUMER.UNPIN</c> takes the pin away. As in 2.11
/// one group (the first configured) holds the state. The pin is not stored: a restart starts unpinned, as nats-server's
/// <c>currentPinId</c> lives in memory only.
/// </summary>
/// <remarks>
/// Guarded by the consumer's lock (<c>gate</c>, handed to it): the consumer calls in holding it; the pin timer and an
/// unpin take it themselves and kick the consumer after releasing it. A consumer without groups has none of this.
/// </remarks>
internal sealed class ConsumerPriority
{
    private readonly Lock gate;
    private readonly StreamCursor cursor;
    private readonly AckTracker acks;
    private readonly IConsumerTimers owner;
    private readonly Action kick;
    private ConsumerConfig config;
    private string? pinId;
    private byte[] pinHeader = [];
    private long pinnedAt;
    private long pinExpires;
    private Timer? timer;
    private bool stopped;
    private ArrayBufferWriter<byte>? headers;

    private ConsumerPriority(ConsumerConfig config, Lock gate, StreamCursor cursor, AckTracker acks, IConsumerTimers owner, Action kick)
    {
        this.config = config;
        this.gate = gate;
        this.cursor = cursor;
        this.acks = acks;
        this.owner = owner;
        this.kick = kick;
    }

    /// <summary>The pin now (<c>pinned_client_id</c>), or null.</summary>
    public string? PinId => pinId;

    /// <summary>The collaborator of a consumer with priority groups or a priority policy; null for one without.</summary>
    public static ConsumerPriority? For(ConsumerConfig config, Lock gate, StreamCursor cursor, AckTracker acks, IConsumerTimers owner, Action kick) =>
        config.PriorityGroups is { Count: > 0 } || config.PriorityPolicy != PriorityPolicy.None
            ? new ConsumerPriority(config, gate, cursor, acks, owner, kick)
            : null;

    /// <summary>nats-server 2.11's <c>validGroupName</c>: <c>^[a-zA-Z0-9/_=-]{1,16}$</c>.</summary>
    public static bool IsValidGroupName(string group)
    {
        if (group.Length is 0 or > 16)
        {
            return false;
        }

        foreach (var c in group)
        {
            if (!char.IsAsciiLetterOrDigit(c) && c is not ('/' or '_' or '=' or '-'))
            {
                return false;
            }
        }

        return true;
    }

    /// <summary>
    /// nats-server 2.11 <c>processNextMsgRequest</c>: the status refusing a pull request's priority fields (code and
    /// text), or null. A request with a matching pin id renews the pin. Only JSON requests carry these fields.
    /// </summary>
    public static (int Code, string Text)? Check(ConsumerConfig config, ConsumerPriority? priority, PullPriority request)
    {
        var policy = config.PriorityPolicy;
        if ((request.MinPending != 0 || request.MinAckPending != 0) && policy != PriorityPolicy.Overflow)
        {
            return (400, "Bad Request - Not a Overflow Priority consumer");
        }

        if (!string.IsNullOrEmpty(request.Id) && policy != PriorityPolicy.PinnedClient)
        {
            return (400, "Bad Request - Not a Pinned Client Priority consumer");
        }

        if (policy == PriorityPolicy.None)
        {
            return null;
        }

        if (string.IsNullOrEmpty(request.Group))
        {
            return (400, "Bad Request - Priority Group missing");
        }

        if (config.PriorityGroups?.Contains(request.Group) != true)
        {
            return (400, "Bad Request - Invalid Priority Group");
        }

        if (priority?.pinId is { } pinned)
        {
            if (request.Id == pinned)
            {
                priority.Renew(GoTime.NowNanoseconds());
            }
            else if (!string.IsNullOrEmpty(request.Id))
            {
                return (423, "Nats-Pin-Id mismatch");
            }
        }

        return null;
    }

    /// <summary>Takes a new configuration (a consumer update); a pin ends without an advisory when the policy is no longer pinned.</summary>
    public void Configure(ConsumerConfig updated)
    {
        config = updated;
        if (updated.PriorityPolicy != PriorityPolicy.PinnedClient && pinId is not null)
        {
            ClearPin();
        }
    }

    /// <summary>
    /// nats-server 2.11 <c>nextWaiting</c>: whether the waiting <paramref name="request"/> may take the next message
    /// (the one to be pinned when nobody is), must wait (moved to the back), or is answered 423 and dropped.
    /// </summary>
    public PullAdmission Admit(WaitingRequest request)
    {
        var wanted = request.Priority;
        if (config.PriorityPolicy == PriorityPolicy.PinnedClient)
        {
            var id = wanted?.Id;
            if (pinId is null || id == pinId)
            {
                return pinId is null && !string.IsNullOrEmpty(id) ? PullAdmission.Refuse : PullAdmission.Deliver;
            }

            return string.IsNullOrEmpty(id) ? PullAdmission.Wait : PullAdmission.Refuse;
        }

        if (config.PriorityPolicy == PriorityPolicy.Overflow && wanted is not null)
        {
            // nats-server compares with its pending count before taking the message (a redelivery does not take one).
            var pending = cursor.NumPending() + (acks.RedeliverQueueCount > 0 ? 1UL : 0UL);
            if ((wanted.MinPending > 0 && (ulong)wanted.MinPending > pending) || (wanted.MinAckPending > 0 && wanted.MinAckPending > acks.Count))
            {
                return PullAdmission.Wait;
            }
        }

        return PullAdmission.Deliver;
    }

    /// <summary>
    /// A message goes to <paramref name="request"/> (null: a push delivery) with <paramref name="messageHeaders"/>: under
    /// <c>pinned_client</c> the request is pinned if nobody is (the pinned advisory goes out), and the headers gain
    /// <c>Nats-Pin-Id</c> (nats-server <c>genHeader</c>), written into a buffer valid until the next delivery.
    /// </summary>
    public ReadOnlySequence<byte> Deliver(WaitingRequest? request, ReadOnlySequence<byte> messageHeaders)
    {
        if (config.PriorityPolicy != PriorityPolicy.PinnedClient || request is null)
        {
            return messageHeaders;
        }

        if (pinId is null)
        {
            var now = GoTime.NowNanoseconds();
            pinId = EventIds.Next();
            pinHeader = Encoding.ASCII.GetBytes("Nats-Pin-Id: " + pinId + "\r\n\r\n");
            pinnedAt = now;
            Renew(now);
            owner.Events.GroupPinned(config.PriorityGroups![0], pinId);
        }

        (request.Priority ??= new PullPriority()).Id = pinId;
        var writer = headers ??= new ArrayBufferWriter<byte>(256);
        writer.ResetWrittenCount();
        if (messageHeaders.Length > 2)
        {
            foreach (var segment in messageHeaders.Slice(0, messageHeaders.Length - 2))
            {
                writer.Write(segment.Span);
            }
        }
        else
        {
            writer.Write("NATS/1.0\r\n"u8);
        }

        writer.Write(pinHeader);
        return new ReadOnlySequence<byte>(writer.WrittenMemory);
    }

    /// <summary>
    /// <c>$JS.API.CONSUMER.UNPIN</c> (nats-server <c>jsConsumerUnpinRequest</c>): false when the consumer has no such
    /// group; otherwise the pin ends with the unpinned advisory (reason <c>admin</c>, sent even when nobody was pinned,
    /// as 2.11 does) and the consumer is kicked so that the next request is pinned.
    /// </summary>
    public bool Unpin(string group)
    {
        lock (gate)
        {
            if (config.PriorityGroups?.Contains(group) != true)
            {
                return false;
            }

            ClearPin();
            owner.Events.GroupUnpinned(group, "admin");
        }

        kick();
        return true;
    }

    /// <summary>The <c>priority_groups</c> of consumer info: the first group with its pin (2.11 reports one).</summary>
    public List<PriorityGroupState>? Info() =>
        config.PriorityGroups is { Count: > 0 } groups ? [new PriorityGroupState { Group = groups[0], PinnedClientId = pinId, PinnedTs = pinnedAt }] : null;

    /// <summary>Stops the pin timer (the consumer stops).</summary>
    public void Stop()
    {
        stopped = true;
        timer?.Dispose();
    }

    /// <summary>The pin holder asked again (or was just pinned): its pin lasts <c>priority_timeout</c> from now.</summary>
    private void Renew(long now)
    {
        pinExpires = now + config.PriorityTimeout;
        if (stopped)
        {
            return;
        }

        timer ??= new Timer(static state => ((ConsumerPriority)state!).OnTimer(), this, Timeout.Infinite, Timeout.Infinite);
        timer.Change(TimeSpan.FromTicks(Math.Max(config.PriorityTimeout, 0) / 100 + 10_000), Timeout.InfiniteTimeSpan);
    }

    /// <summary>The pin timer fired: a pin not renewed for <c>priority_timeout</c> ends (advisory reason <c>timeout</c>).</summary>
    private void OnTimer()
    {
        lock (gate)
        {
            if (stopped || pinId is null)
            {
                return;
            }

            var now = GoTime.NowNanoseconds();
            if (now < pinExpires)
            {
                // Renewed after this firing was due.
                timer!.Change(TimeSpan.FromTicks((pinExpires - now) / 100 + 10_000), Timeout.InfiniteTimeSpan);
                return;
            }

            ClearPin();
            owner.Events.GroupUnpinned(config.PriorityGroups![0], "timeout");
        }

        kick();
    }

    private void ClearPin()
    {
        pinId = null;
        pinnedAt = 0;
        timer?.Change(Timeout.Infinite, Timeout.Infinite);
    }
}

/// <summary>What <see cref="ConsumerPriority.Admit"/> decides for a waiting request.</summary>
internal enum PullAdmission
{
    /// <summary>The request takes the next message.</summary>
    Deliver,

    /// <summary>The request waits and goes to the back of the queue (nats-server <c>cycle</c>).</summary>
    Wait,

    /// <summary>The request names a pin that is not the current one: answered <c>423 Nats-Wrong-Pin-Id</c> and dropped.</summary>
    Refuse,
}

/// <summary>The priority fields of a JSON pull request (nats-server 2.11 <c>PriorityGroup</c>).</summary>
internal sealed class PullPriority
{
    public string? Group { get; init; }

    public long MinPending { get; init; }

    public long MinAckPending { get; init; }

    /// <summary>The pin id the requester holds (<c>id</c>); set when the request gets pinned.</summary>
    public string? Id { get; set; }
}
