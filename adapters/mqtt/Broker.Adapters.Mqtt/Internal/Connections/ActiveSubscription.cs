using Broker.Abstractions;
using Broker.Adapters.Mqtt.Internal.Sessions;

namespace Broker.Adapters.Mqtt.Internal.Connections;

/// <summary>
/// One MQTT subscription of a connection: its options and the bus subscriptions that feed it (two for a filter
/// ending in <c>/#</c>, which nats-server also subscribes on the parent subject).
/// </summary>
internal sealed class ActiveSubscription : IBusMessageReceiver
{
    // The bus subscriptions that feed it: the subject's, and the parent subject's for a filter ending in /# (two fields
    // rather than a list: a session is resident as long as its client is connected; issue 25).
    private IBusSubscription? busSubscription;
    private IBusSubscription? parentSubscription;

    // subject: the NATS subject the filter maps to; not kept (the bus subscriptions hold it as bytes; issue 25).
    public ActiveSubscription(SubscriptionRecord record, string subject, string? queueGroup, string topicFilter)
    {
        Record = record;
        QueueGroup = queueGroup;
        TopicFilter = topicFilter;
        Reserved = Topics.TopicMapper.IsReservedSubscription(subject);
    }

    public SubscriptionRecord Record { get; }

    /// <summary>The queue group of a shared subscription (<c>$share/&lt;group&gt;/...</c>), or <see langword="null"/>.</summary>
    public string? QueueGroup { get; }

    /// <summary>The filter without its <c>$share/&lt;group&gt;/</c> prefix.</summary>
    public string TopicFilter { get; }

    /// <summary>Whether topics starting with <c>$</c> must not reach it (MQTT-4.7.2-1).</summary>
    public bool Reserved { get; }

    /// <summary>The QoS messages are delivered with at most.</summary>
    public byte Qos => Record.Qos;

    /// <summary>The deliveries of its JetStream consumer (QoS 1 and 2), or <see langword="null"/>.</summary>
    public DurableFeed? Feed { get; set; }

    /// <summary>The connection's subscriptions, which its live messages are handed to (set before it subscribes).</summary>
    public SubscriptionManager? Manager { get; set; }

    /// <summary>A live message from one of its bus subscriptions, on the producer's thread.</summary>
    public void Receive(in BusMessage message) => Manager!.Deliver(this, message);

    /// <summary>Adds a bus subscription that feeds it (at most two: the subject's, then its parent's).</summary>
    public void AddBusSubscription(IBusSubscription subscription)
    {
        if (busSubscription is null)
        {
            busSubscription = subscription;
        }
        else
        {
            parentSubscription = subscription;
        }
    }

    public void Unsubscribe()
    {
        busSubscription?.Dispose();
        parentSubscription?.Dispose();
        busSubscription = parentSubscription = null;
        Feed?.Subscription?.Dispose();
        Feed = null;
    }
}

/// <summary>
/// The bus subscription on a consumer's deliver subject and the subscription its deliveries are for. A SUBSCRIBE that
/// replaces a subscription keeping its consumer hands the feed over rather than subscribing again: deliveries already
/// queued for the bus subscription would otherwise be dropped with it and come again only after <c>ack_wait</c>.
/// </summary>
internal sealed class DurableFeed(string deliverSubject, ActiveSubscription target)
{
    private ActiveSubscription target = target;

    public string DeliverSubject { get; } = deliverSubject;

    /// <summary>Set by the connection's read loop, read by the bus's delivery thread.</summary>
    public ActiveSubscription Target
    {
        get => Volatile.Read(ref target);
        set => Volatile.Write(ref target, value);
    }

    public IBusSubscription? Subscription { get; set; }
}
