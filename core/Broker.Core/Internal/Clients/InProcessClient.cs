using System.Buffers;
using System.Globalization;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Text;
using Broker.Abstractions;
using Broker.Core.Internal.Accounts;
using Broker.Core.Internal.Subscriptions;
using Microsoft.Extensions.Logging;

namespace Broker.Core.Internal.Clients;

/// <summary>
/// A client inside the process (<see cref="IBusClient"/>): it publishes through the same routing path as a NATS
/// connection, and its handlers receive messages from its own delivery queue (<c>.Drain.cs</c>), never on the
/// publisher's thread, so a handler may call the bus in any way without deadlock or recursion (docs/locks.md).
/// Publishes through one client are serialised by <see cref="PublishLock"/>, which guards the producer state the
/// routing path keeps (match cache, pending flushes, batch counters); no handler ever runs under it.
/// </summary>
internal partial class InProcessClient : ClientBase, IBusClient
{
    private static readonly byte[][] SmallSids = [.. Enumerable.Range(0, 16).Select(static i => Encoding.ASCII.GetBytes(i.ToString(CultureInfo.InvariantCulture)))];

    private readonly bool deferFlush;
    private long nextSid;
    private int closed;

    /// <param name="server">The broker.</param>
    /// <param name="options">The plugin's options.</param>
    /// <param name="account">The account <see cref="BusClientOptions.Account"/> names (resolved by the caller).</param>
    public InProcessClient(BrokerCore server, BusClientOptions options, Account account)
        : this(server, options.Name, options.Echo, ClientKind.Internal, options.DeferFlush, account)
    {
    }

    protected InProcessClient(BrokerCore server, string? name, bool echo, ClientKind kind, bool deferFlush, Account? account = null)
        : base(server, kind, account)
    {
        Name = name;
        Echo = echo;
        this.deferFlush = deferFlush;

        // Requests learn about missing responders from the 503 status, which needs headers.
        SupportsHeaders = true;
        NoResponders = true;
    }

    public override bool IsClosed => Volatile.Read(ref closed) != 0;

    /// <summary>
    /// Serialises publishes through this client; see the class remarks. Made with the first publish or flush: an MQTT
    /// session that only subscribes and has received nothing holds none (40 B; issue 25).
    /// </summary>
    protected Lock PublishLock => Volatile.Read(ref publishLock) ?? MakePublishLock();

    private Lock? publishLock;

    private Lock MakePublishLock()
    {
        var made = new Lock();
        return Interlocked.CompareExchange(ref publishLock, made, null) ?? made;
    }

    /// <summary>The most subscriptions the client may hold; 0 for no limit.</summary>
    protected virtual int SubscriptionLimit => 0;

    /// <summary>
    /// Whether a publish leaves its flush to a later end of batch: always with <see cref="BusConnectOptions.DeferFlush"/>,
    /// and for publishes this client's own handlers make, which are flushed when their batch ends (see .Drain.cs).
    /// </summary>
    protected bool DefersFlush => deferFlush || ReferenceEquals(BusThread.Draining, this);

    public void Publish(ReadOnlySpan<byte> subject, ReadOnlySpan<byte> replyTo, in ReadOnlySequence<byte> headers, in ReadOnlySequence<byte> payload)
        => PublishCore(subject, subject, replyTo, headers, payload, flushNow: false);

    public void Publish(ReadOnlySpan<byte> subject, ReadOnlySpan<byte> deliverAs, ReadOnlySpan<byte> replyTo, in ReadOnlySequence<byte> headers, in ReadOnlySequence<byte> payload)
        => PublishCore(subject, deliverAs, replyTo, headers, payload, flushNow: false);

    /// <summary>The account's name (<see cref="IBusClient.Account"/>); the client's <see cref="ClientBase.Account"/> is the account itself.</summary>
    string IBusClient.Account => Account.Name;

    /// <summary>Interest in the client's own account: its subject index, cached as for publishes.</summary>
    public bool HasInterest(ReadOnlySpan<byte> subject) => !Account.SubList.Match(subject).IsEmpty;

    public IBusSubscription Subscribe(string subject, string? queueGroup, BusMessageHandler handler)
    {
        ArgumentNullException.ThrowIfNull(handler);
        return SubscribeCore(subject, queueGroup, handler, output: null);
    }

    /// <summary>The receiver is the subscription's handler itself: no delegate per subscription (issue 25).</summary>
    public IBusSubscription Subscribe(string subject, string? queueGroup, IBusMessageReceiver receiver)
    {
        ArgumentNullException.ThrowIfNull(receiver);
        return SubscribeCore(subject, queueGroup, receiver, output: null);
    }

    public virtual ValueTask FlushAsync(CancellationToken cancellationToken = default)
    {
        if (!IsClosed)
        {
            lock (PublishLock)
            {
                EndBatch();
            }
        }

        return ValueTask.CompletedTask;
    }

    public override void Deliver(
        ClientBase producer,
        Subscription subscription,
        ReadOnlySpan<byte> subject,
        ReadOnlySpan<byte> replyTo,
        in ReadOnlySequence<byte> headers,
        in ReadOnlySequence<byte> payload)
    {
        if (IsReplySubscription(subscription))
        {
            // Replies complete their request here, on the responder's thread: a handler blocked on a request of its
            // own client cannot then starve its own reply (see .Request.cs).
            CompleteRequest(subject, headers, payload);
            return;
        }

        var queued = Queue.Enqueue(subscription, subject, replyTo, headers, payload);
        Interlocked.Increment(ref OutMessages);
        Interlocked.Add(ref OutBytes, headers.Length + payload.Length);
        if (queued > Server.Options.MaxPending / 4 * 3)
        {
            // The handlers are far behind: a NATS producer ends its batch and stalls on FlushOutput's task.
            producer.RequestYield();
        }

        producer.AddPendingFlush(this);
    }

    public ValueTask DisposeAsync()
    {
        CloseByOwner();
        return ValueTask.CompletedTask;
    }

    /// <summary>Closes the client because its owner disposed it.</summary>
    protected virtual void CloseByOwner()
    {
        if (TryMarkClosed())
        {
            CloseSubscriptions();
            FailPendingRequests();
        }
    }

    /// <summary>
    /// Routes one message by <paramref name="subject"/>, delivered as <paramref name="deliverAs"/>;
    /// <paramref name="flushNow"/> ends the batch even when flushes are deferred.
    /// </summary>
    /// <returns>
    /// The subject the message was routed by: <paramref name="subject"/>, or where the account's mappings sent it (in
    /// this producer's scratch buffer, valid until its next publish).
    /// </returns>
    protected ReadOnlySpan<byte> PublishCore(ReadOnlySpan<byte> subject, scoped ReadOnlySpan<byte> deliverAs, scoped ReadOnlySpan<byte> replyTo, scoped in ReadOnlySequence<byte> headers, scoped in ReadOnlySequence<byte> payload, bool flushNow)
    {
        EnsureUsable();
        if (!SubjectValidator.IsValidLiteralSubject(subject))
        {
            throw new ArgumentException($"'{Encoding.UTF8.GetString(subject)}' is not a valid publish subject.", nameof(subject));
        }

        lock (PublishLock)
        {
            // A plain publish (delivered as published) is mapped as a client's; JetStream's deliveries of stored
            // messages to another subject are not, as nats-server's internal clients' are not.
            if (Account.Mappings is { } mappings && Unsafe.AreSame(ref MemoryMarshal.GetReference(subject), ref MemoryMarshal.GetReference(deliverAs)))
            {
                subject = MapSubject(mappings, subject);
                deliverAs = subject;
            }

            OnPublishing(subject, replyTo);
            RouteMessage(subject, deliverAs, replyTo, headers, payload);
            if (flushNow || !DefersFlush)
            {
                EndBatch();
            }
        }

        return subject;
    }

    /// <summary>
    /// Flushes what this client's publishes delivered. Internal producers never stall on far-behind connections
    /// (nats-server stalls only client connections), so the stalls are dropped. <see cref="PublishLock"/> held.
    /// </summary>
    protected virtual void EndBatch()
    {
        FlushPending();
        if (HasStalls)
        {
            Stalls.Clear();
        }
    }

    /// <summary>Checks a publish before it is routed (permissions of a bound client); throws to refuse. <see cref="PublishLock"/> held.</summary>
    protected virtual void OnPublishing(ReadOnlySpan<byte> subject, ReadOnlySpan<byte> replyTo)
    {
    }

    /// <summary>Checks a subscription before it is added (permissions of a bound client); throws to refuse.</summary>
    protected virtual void OnSubscribing(Subscription subscription)
    {
    }

    /// <summary>
    /// Creates, checks and adds a subscription with a handler (queued; a <see cref="BusMessageHandler"/> or an
    /// <see cref="IBusMessageReceiver"/>) or an output (written inline).
    /// </summary>
    protected IBusSubscription SubscribeCore(string subject, string? queueGroup, object? handler, BusOutputHandler? output)
    {
        var subscription = CreateSubscription(subject, queueGroup);
        subscription.Handler = handler;
        subscription.Output = output;
        AddChecked(subscription);
        return subscription;
    }

    private Subscription CreateSubscription(string subject, string? queueGroup)
    {
        EnsureUsable();
        ArgumentNullException.ThrowIfNull(subject);
        if (queueGroup is not null && (queueGroup.Length == 0 || queueGroup.AsSpan().IndexOfAny(" \t\r\n") >= 0))
        {
            throw new ArgumentException($"'{queueGroup}' is not a valid queue group.", nameof(queueGroup));
        }

        return new Subscription(
            this,
            Encoding.UTF8.GetBytes(subject),
            queueGroup is null ? null : Encoding.UTF8.GetBytes(queueGroup),
            SidBytes(Interlocked.Increment(ref nextSid)));
    }

    // The first sids' bytes are shared by every client (a sid's bytes are never written to): an adapter session's bus
    // client numbers its few subscriptions from 1, an array of 25 B each (issue 25).
    private static byte[] SidBytes(long sid)
        => (ulong)sid < (ulong)SmallSids.Length ? SmallSids[sid] : Encoding.ASCII.GetBytes(sid.ToString(CultureInfo.InvariantCulture));

    private void AddChecked(Subscription subscription)
    {
        OnSubscribing(subscription);
        switch (AddSubscription(subscription, SubscriptionLimit))
        {
            case SubscribeOutcome.InvalidSubject:
                throw new ArgumentException($"'{subscription.SubjectString}' is not a valid subject.");
            case SubscribeOutcome.TooMany:
                throw new BusRefusedException(BusRefusalReason.MaxSubscriptions, subscription.SubjectString, "maximum subscriptions exceeded");
        }
    }

    /// <summary>Refuses calls on a closed client and from inside an output callback.</summary>
    protected void EnsureUsable()
    {
        if (BusThread.InOutputCallback)
        {
            throw new InvalidOperationException("A bus output handler or writer must not call the bus: it runs under the connection's output lock.");
        }

        if (IsClosed)
        {
            throw new ObjectDisposedException(ToString(), ClosedMessage);
        }
    }

    /// <summary>Why operations on the closed client fail.</summary>
    protected virtual string ClosedMessage => "The bus client was disposed.";

    /// <summary>Marks the client closed; true for the caller that closed it.</summary>
    protected bool TryMarkClosed() => Interlocked.Exchange(ref closed, 1) == 0;

    /// <summary>Removes every subscription; messages still queued for them are dropped.</summary>
    protected void CloseSubscriptions()
    {
        foreach (var subscription in GetSubscriptions())
        {
            subscription.Cancelled = true;
        }

        RemoveAllSubscriptions();
    }

    /// <summary>Unsubscribes on behalf of the subscriber: what is still queued for the subscription is dropped.</summary>
    protected internal void Cancel(Subscription subscription)
    {
        subscription.Cancelled = true;
        RemoveSubscription(subscription);
    }

    public override string ToString() => $"{Name ?? "internal"} cid:{Id}";
}
