using System.Buffers;
using System.Globalization;
using System.Text;
using Broker.Abstractions;
using Broker.Core.Internal.Subscriptions;
using Microsoft.Extensions.Logging;

namespace Broker.Core.Internal.Clients;

/// <summary>
/// A client inside the process (<see cref="IBusClient"/>): it publishes through the same routing path as a NATS
/// connection and receives deliveries as handler calls on the producer's thread. Publishes through one client are
/// serialised by a lock, which is re-entrant so a handler may publish (reply) through the client that received.
/// </summary>
internal sealed partial class InProcessClient : ClientBase, IBusClient, IDeliverAsPublisher
{
    private readonly Lock publishLock = new();
    private readonly ILogger logger;
    private long nextSid;
    private int disposed;

    public InProcessClient(BrokerCore server, BusClientOptions options)
        : base(server, ClientKind.Internal)
    {
        logger = server.Logger;
        Name = options.Name;
        Echo = options.Echo;

        // Requests learn about missing responders from the 503 status, which needs headers.
        SupportsHeaders = true;
        NoResponders = true;
    }

    public override bool IsClosed => Volatile.Read(ref disposed) != 0;

    public void Publish(ReadOnlySpan<byte> subject, ReadOnlySpan<byte> replyTo, in ReadOnlySequence<byte> headers, in ReadOnlySequence<byte> payload)
    {
        ObjectDisposedException.ThrowIf(IsClosed, this);
        if (!SubjectValidator.IsValidLiteralSubject(subject))
        {
            throw new ArgumentException($"'{Encoding.UTF8.GetString(subject)}' is not a valid publish subject.", nameof(subject));
        }

        lock (publishLock)
        {
            RouteMessage(subject, replyTo, headers, payload);
            FlushPending();
            if (Stalls.Count > 0)
            {
                StallPolicy.Wait(Stalls);
            }
        }
    }

    public void Publish(ReadOnlySpan<byte> subject, ReadOnlySpan<byte> deliverAs, ReadOnlySpan<byte> replyTo, in ReadOnlySequence<byte> headers, in ReadOnlySequence<byte> payload)
    {
        ObjectDisposedException.ThrowIf(IsClosed, this);
        if (!SubjectValidator.IsValidLiteralSubject(subject))
        {
            throw new ArgumentException($"'{Encoding.UTF8.GetString(subject)}' is not a valid publish subject.", nameof(subject));
        }

        lock (publishLock)
        {
            RouteMessage(subject, deliverAs, replyTo, headers, payload);
            FlushPending();
            if (Stalls.Count > 0)
            {
                StallPolicy.Wait(Stalls);
            }
        }
    }

    public IBusSubscription Subscribe(string subject, string? queueGroup, BusMessageHandler handler)
    {
        ObjectDisposedException.ThrowIf(IsClosed, this);
        ArgumentNullException.ThrowIfNull(subject);
        ArgumentNullException.ThrowIfNull(handler);
        if (queueGroup is not null && (queueGroup.Length == 0 || queueGroup.AsSpan().IndexOfAny(" \t\r\n") >= 0))
        {
            throw new ArgumentException($"'{queueGroup}' is not a valid queue group.", nameof(queueGroup));
        }

        var sid = Interlocked.Increment(ref nextSid).ToString(CultureInfo.InvariantCulture);
        var subscription = new Subscription(
            this,
            Encoding.UTF8.GetBytes(subject),
            queueGroup is null ? null : Encoding.UTF8.GetBytes(queueGroup),
            Encoding.UTF8.GetBytes(sid))
        {
            Handler = handler,
        };

        if (AddSubscription(subscription, maxSubscriptions: 0) == SubscribeOutcome.InvalidSubject)
        {
            throw new ArgumentException($"'{subject}' is not a valid subject.", nameof(subject));
        }

        return new BusSubscription(this, subscription);
    }

    public override void Deliver(
        ClientBase producer,
        Subscription subscription,
        ReadOnlySpan<byte> subject,
        ReadOnlySpan<byte> replyTo,
        in ReadOnlySequence<byte> headers,
        in ReadOnlySequence<byte> payload)
    {
        Interlocked.Increment(ref OutMessages);
        Interlocked.Add(ref OutBytes, headers.Length + payload.Length);
        try
        {
            subscription.Handler!(new BusMessage(subject, replyTo, headers, payload));
        }
#pragma warning disable CA1031 // A faulty handler must not break delivery to the other subscribers of this message.
        catch (Exception ex)
#pragma warning restore CA1031
        {
            InProcessLog.HandlerFailed(logger, Name ?? "internal", subscription.SubjectString, ex);
        }
    }

    public ValueTask DisposeAsync()
    {
        if (Interlocked.Exchange(ref disposed, 1) == 0)
        {
            RemoveAllSubscriptions();
        }

        return ValueTask.CompletedTask;
    }

    private sealed class BusSubscription(InProcessClient client, Subscription subscription) : IBusSubscription
    {
        public string Subject => subscription.SubjectString;

        public string? QueueGroup => subscription.QueueString;

        public long Delivered => Interlocked.Read(ref subscription.Delivered);

        public void AutoUnsubscribe(long maxMessages)
        {
            ArgumentOutOfRangeException.ThrowIfNegativeOrZero(maxMessages);
            subscription.Max = maxMessages;
            if (Interlocked.Read(ref subscription.Delivered) >= maxMessages)
            {
                client.RemoveSubscription(subscription);
            }
        }

        public void Dispose() => client.RemoveSubscription(subscription);
    }
}
