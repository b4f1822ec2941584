using System.Buffers;
using System.Runtime.CompilerServices;
using Broker.Core.Internal.Accounts;
using Broker.Core.Internal.Subscriptions;

namespace Broker.Core.Internal.Clients;

/// <summary>
/// The publish path: match, fan out, deferred flush, no-responders; forwarding across service imports is the
/// producer's <see cref="ServiceImportForwarder"/>'s, deliveries through stream-import shadows its
/// <see cref="ShadowSubscriptions"/>'.
/// </summary>
internal abstract partial class ClientBase
{
    private static readonly ReadOnlySequence<byte> NoRespondersHeaderPrefix = new("NATS/1.0 503\r\nNats-Subject: "u8.ToArray());

    // The producer's batch state; made at its first publish: a client that only subscribes holds none (issue 25).
    private ProducerBatch? producer;

    // As a flush target: the stamp of the last producer batch that listed this client (ProducerBatch.AddPendingFlush).
    internal long ListedInStamp;

    // Set when the client listed itself for the flush at the end of its batch before it had producer state (its own
    // protocol replies, such as a PONG): a client that only subscribes and pings then makes none.
    private bool flushSelf;

    /// <summary>This client's producer state, made on first use; only the producer's own thread calls it.</summary>
    private ProducerBatch Producer
    {
        // Forced inline for the precompiled publish path (ArgumentSplitter.IsSeparator says why).
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        get => producer ??= new ProducerBatch();
    }

    /// <summary>Flushes of far-behind clients this producer should wait for before reading more (usually empty).</summary>
    protected internal List<Task> Stalls => Producer.Stalls ??= [];

    /// <summary>Whether <see cref="Stalls"/> holds any flush to wait for; asks without making the list.</summary>
    protected internal bool HasStalls => producer?.Stalls is { Count: > 0 };

    /// <summary>
    /// Set by a delivery target that fell behind or took a large share of its limit since its last flush: the
    /// producer should end its batch now (flush, maybe stall) instead of parsing the rest of its input first, as
    /// nats-server stalls producers between messages. Cleared by <see cref="FlushPending"/>.
    /// </summary>
    protected internal bool YieldRequested { get; private set; }

    /// <summary>Whether deliveries of the current batch wait for <see cref="FlushPending"/>; read by the producer's own thread.</summary>
    protected bool HasPendingFlush => flushSelf || producer is { HasPendingFlush: true };

    /// <summary>Asks this producer to end its current batch early (see <see cref="YieldRequested"/>).</summary>
    public void RequestYield() => YieldRequested = true;

    /// <summary>Lists <paramref name="target"/> for one flush at the end of this producer's batch.</summary>
    public void AddPendingFlush(ClientBase target)
    {
        if (producer is null && ReferenceEquals(target, this))
        {
            // The first listing of the batch: flushed first, as the list would (listed again later, it costs one
            // extra flush).
            flushSelf = true;
            return;
        }

        Producer.AddPendingFlush(this, target);
    }

    /// <summary>
    /// Ends a producer batch: publishes the counters, then flushes every client that received output. Clients that
    /// are far behind are collected in <see cref="Stalls"/> for the producer to wait on (see <see cref="StallPolicy"/>).
    /// </summary>
    public void FlushPending()
    {
        producer?.PublishCounters(this);
        if (flushSelf)
        {
            flushSelf = false;
            if (FlushOutput() is { } stall)
            {
                Stalls.Add(stall);
            }
        }

        producer?.End();
        YieldRequested = false;
    }

    /// <summary>
    /// Routes a message this client published to every matching subscription: all plain ones, one member of each
    /// queue group. Permissions must have been checked by the caller. Sends the no-responders status when asked
    /// for and nobody received it.
    /// </summary>
    protected void RouteMessage(ReadOnlySpan<byte> subject, ReadOnlySpan<byte> replyTo, in ReadOnlySequence<byte> headers, in ReadOnlySequence<byte> payload) =>
        RouteMessage(subject, subject, replyTo, headers, payload);

    /// <summary>
    /// Routes a message by <paramref name="subject"/> but delivers it with <paramref name="deliverAs"/> as its subject:
    /// JetStream sends a stored message to a consumer's deliver subject or a pull request's inbox carrying the subject
    /// it was stored under, as nats-server does.
    /// </summary>
    protected void RouteMessage(ReadOnlySpan<byte> subject, ReadOnlySpan<byte> deliverAs, ReadOnlySpan<byte> replyTo, in ReadOnlySequence<byte> headers, in ReadOnlySequence<byte> payload)
    {
        var size = headers.Length + payload.Length;
        InMessages++;
        InBytes += size;
        var batch = Producer;
        batch.InMessages++;
        batch.InBytes += size;

        var delivered = DeliverToAll(batch.MatchCache.Match(Account.SubList, subject), subject, deliverAs, replyTo, headers, payload);
        if (delivered == 0 && NoResponders && !replyTo.IsEmpty)
        {
            SendNoResponders(subject, replyTo);
        }
    }

    /// <summary>
    /// Delivers to every plain subscription of <paramref name="result"/> and one member of each queue group, counting
    /// the deliveries in this producer's batch; returns how many there were.
    /// </summary>
    internal int DeliverToAll(SubListResult result, ReadOnlySpan<byte> subject, ReadOnlySpan<byte> deliverAs, ReadOnlySpan<byte> replyTo, in ReadOnlySequence<byte> headers, in ReadOnlySequence<byte> payload)
    {
        if (result.HasLink)
        {
            return CountDelivered((Producer.LeafFanout ??= new Leaf.LeafFanout(this)).Deliver(result, subject, deliverAs, replyTo, headers, payload), headers.Length + payload.Length);
        }

        var delivered = 0;
        foreach (var subscription in result.Plain)
        {
            if (TryDeliver(subscription, subject, deliverAs, replyTo, headers, payload))
            {
                delivered++;
            }
        }

        foreach (var group in result.Queues)
        {
            if (DeliverToQueue(group, subject, deliverAs, replyTo, headers, payload))
            {
                delivered++;
            }
        }

        return CountDelivered(delivered, headers.Length + payload.Length);
    }

    /// <summary>Counts <paramref name="delivered"/> deliveries of a message of <paramref name="size"/> bytes in this producer's batch.</summary>
    // Forced inline for the precompiled publish path (ArgumentSplitter.IsSeparator says why).
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal int CountDelivered(int delivered, long size)
    {
        if (delivered > 0)
        {
            var batch = Producer;
            batch.OutMessages += delivered;
            batch.OutBytes += delivered * size;
        }

        return delivered;
    }

    private bool DeliverToQueue(QueueGroup group, ReadOnlySpan<byte> subject, ReadOnlySpan<byte> deliverAs, ReadOnlySpan<byte> replyTo, in ReadOnlySequence<byte> headers, in ReadOnlySequence<byte> payload)
    {
        var members = group.Members;
        var start = members.Length == 1 ? 0 : Random.Shared.Next(members.Length);
        for (var i = 0; i < members.Length; i++)
        {
            var index = start + i;
            if (index >= members.Length)
            {
                index -= members.Length;
            }

            if (TryDeliver(members[index], subject, deliverAs, replyTo, headers, payload))
            {
                return true;
            }
        }

        return false;
    }

    internal bool TryDeliver(Subscription subscription, ReadOnlySpan<byte> subject, ReadOnlySpan<byte> deliverAs, ReadOnlySpan<byte> replyTo, in ReadOnlySequence<byte> headers, in ReadOnlySequence<byte> payload)
    {
        var target = subscription.Client;
        if (subscription.Closed || target.IsClosed || (!Echo && ReferenceEquals(target, this)))
        {
            return false;
        }

        if (subscription.Origin is { } origin)
        {
            return (Producer.ShadowDelivery ??= new ShadowSubscriptions(this)).TryDeliver(subscription, origin, subject, deliverAs, replyTo, headers, payload);
        }

        if (subscription.CheckDenyOnDelivery && target.Permissions is { } permissions && !permissions.IsDeliveryAllowed(subject, subscription.Queue))
        {
            return false;
        }

        if (subscription.Max > 0)
        {
            var count = Interlocked.Increment(ref subscription.Delivered);
            if (count > subscription.Max)
            {
                return false;
            }

            DeliverCounted(target, subscription, deliverAs, replyTo, headers, payload);
            if (count == subscription.Max)
            {
                target.RemoveSubscription(subscription);
            }

            return true;
        }

        // Without a limit the count is statistics only; a lost increment under contention is acceptable.
        subscription.Delivered++;
        DeliverCounted(target, subscription, deliverAs, replyTo, headers, payload);
        return true;
    }

    internal void DeliverCounted(ClientBase target, Subscription subscription, ReadOnlySpan<byte> subject, ReadOnlySpan<byte> replyTo, in ReadOnlySequence<byte> headers, in ReadOnlySequence<byte> payload)
    {
        if (!replyTo.IsEmpty && target.Permissions is { TracksResponses: true } permissions)
        {
            permissions.TrackReply(replyTo);
        }

        target.Deliver(this, subscription, subject, replyTo, headers, payload);
    }

    /// <summary>
    /// Tells the publisher nobody received its request: an HMSG with status 503 on the publisher's own subscription
    /// matching the reply subject (nats-server sends nothing when it has none).
    /// </summary>
    private void SendNoResponders(ReadOnlySpan<byte> subject, ReadOnlySpan<byte> replyTo)
    {
        var result = Account.SubList.Match(replyTo);
        var own = FindOwn(result.Plain);
        if (own is null)
        {
            foreach (var group in result.Queues)
            {
                own = FindOwn(group.Members);
                if (own is not null)
                {
                    break;
                }
            }
        }

        if (own is null)
        {
            return;
        }

        // NATS/1.0 503\r\nNats-Subject: <subject>\r\n\r\n, as nats-server 2.12+.
        var header = new byte[NoRespondersHeaderPrefix.Length + subject.Length + 4];
        NoRespondersHeaderPrefix.CopyTo(header);
        subject.CopyTo(header.AsSpan((int)NoRespondersHeaderPrefix.Length));
        "\r\n\r\n"u8.CopyTo(header.AsSpan(header.Length - 4));
        Deliver(this, own, replyTo, default, new ReadOnlySequence<byte>(header), ReadOnlySequence<byte>.Empty);
    }

    /// <summary>Replies reserved for service imports, JetStream acks and gateways (nats-server <c>isReservedReply</c>).</summary>
    protected static bool IsReservedReply(ReadOnlySpan<byte> reply)
        => reply.StartsWith("_R_."u8) || reply.StartsWith("$JS.ACK."u8) || reply.StartsWith("$GNR."u8);

    private Subscription? FindOwn(Subscription[] subscriptions)
    {
        foreach (var subscription in subscriptions)
        {
            if (ReferenceEquals(subscription.Client, this) && !subscription.Closed)
            {
                return subscription;
            }
        }

        return null;
    }

    /// <summary>Whether this producer is forwarding across a service import now: shadows of stream imports are skipped.</summary>
    internal bool Forwarding => producer?.ServiceForwarder is { Forwarding: true };

    /// <summary>
    /// Forwards a message that matched a subscription of an account's import client: across its service import, or,
    /// for the subscription on the account's response prefix, back along the route of the reply it was published to.
    /// The delivery was counted by the caller and is taken back (nats-server counts none to internal subscriptions;
    /// the forwarded deliveries are counted as they are made).
    /// </summary>
    internal void ForwardToImportClient(Subscription subscription, ReadOnlySpan<byte> subject, ReadOnlySpan<byte> deliverAs, ReadOnlySpan<byte> replyTo, in ReadOnlySequence<byte> headers, in ReadOnlySequence<byte> payload)
    {
        var batch = Producer;
        batch.OutMessages--;
        batch.OutBytes -= headers.Length + payload.Length;
        var account = subscription.Client.Account;
        if (subscription.ServiceImport is { } import)
        {
            (batch.ServiceForwarder ??= new ServiceImportForwarder(this)).Forward(import, account, subject, deliverAs, replyTo, headers, payload);
        }
        else if (account.Responses.Find(subject) is { } route)
        {
            (batch.ServiceForwarder ??= new ServiceImportForwarder(this)).Forward(route, account, subject, deliverAs, replyTo, headers, payload);
        }
    }

    /// <summary>The measured round-trip time in nanoseconds, 0 until measured (nats-server's <c>c.rtt</c>).</summary>
    protected internal virtual long RoundTripNanoseconds => 0;

    /// <summary>Adds the details a <c>share</c> import passes on (nats-server's detailed <c>getClientInfo</c>).</summary>
    protected internal virtual void DescribeForRequestInfo(RequestInfoHeader info)
    {
        info.Start = Events.ClientInfo.FormatTime(StartedAt);
        info.Id = Id;
        info.User = AuthorizedUser;
        info.Name = Name;
        info.Kind = "Client";
        info.ClientType = "nats";
    }
}
