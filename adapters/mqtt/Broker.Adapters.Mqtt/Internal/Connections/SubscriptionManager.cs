using Broker.Abstractions;
using Broker.Adapters.Mqtt.Internal.Accounts;
using Broker.Adapters.Mqtt.Internal.Codec;
using Broker.Adapters.Mqtt.Internal.Delivery;
using Broker.Adapters.Mqtt.Internal.JetStream;
using Broker.Adapters.Mqtt.Internal.Sessions;
using Broker.Adapters.Mqtt.Internal.Topics;
using Microsoft.Extensions.Logging;

namespace Broker.Adapters.Mqtt.Internal.Connections;

/// <summary>
/// The subscriptions of one connection: SUBSCRIBE and UNSUBSCRIBE, topic filters as NATS subjects (a bus subscription
/// each, two for <c>a/#</c>; <c>$share/&lt;group&gt;/</c> filters as queue groups), QoS 1 and 2 subscriptions each on
/// its JetStream consumer, the session's subscriptions restored as it resumes, and what reaches each subscription
/// (<c>SubscriptionManager.Delivery.cs</c>: live messages, the consumer's, the retained ones).
/// </summary>
internal sealed partial class SubscriptionManager
{
    private const string SharePrefix = "$share/";

    // The connection's subscriptions by topic filter. Changed by the read loop; deliveries hold their own reference.
    private FilterTable<ActiveSubscription> subscriptions;
    private readonly MqttAccount account;
    private readonly ISessionStore store;
    private readonly MqttOptions options;
    private readonly BusConnections buses;
    private readonly MqttSession session;
    private readonly PacketOutput output;
    // The connection: its QoS flow, which the PUBLISH writer takes packet identifiers from.
    private readonly IOutboundQosSource owner;
    // The PUBLISH writer, made with the first delivery (Publishes): a subscriber nothing reached holds none (48 B,
    // issue 25).
    private OutboundPublishes? publishes;
    // The topic aliases the client accepts (MQTT 5; 0: none), for the writer.
    private readonly ushort topicAliasMaximum;
    private readonly bool v5;

    // Deliveries in flight at most, which the consumers' max_ack_pending follows.
    private readonly int inflightLimit;

    // Why filters of the SUBSCRIBE being handled were refused (MQTT 5 SUBACK reason string); read loop only.
    private System.Text.StringBuilder? refusals;

    public SubscriptionManager(
        MqttAccount account,
        ISessionStore store,
        MqttOptions options,
        BusConnections buses,
        MqttSession session,
        PacketOutput output,
        IOutboundQosSource owner,
        ushort topicAliasMaximum,
        int inflightLimit,
        bool v5)
    {
        this.account = account;
        this.store = store;
        this.options = options;
        this.buses = buses;
        this.session = session;
        this.output = output;
        this.owner = owner;
        this.topicAliasMaximum = topicAliasMaximum;
        this.inflightLimit = inflightLimit;
        this.v5 = v5;
    }

    // Read through the account and the output rather than held again: 24 B less per connection (issue 25). The
    // session store is held: the account may swap its store (SessionManager.UseStore) while the connection lives.
    private IQosSource qosSource => account;

    /// <summary>The session store the connection's parts save to (the one of when the connection started).</summary>
    public ISessionStore Store => store;

    private RetainedMessages retained => account.Retained;

    private ConnectionStatus status => output.Status;

    private ILogger logger => output.Logger;

    // Deliveries come from any producer's thread: the first writer made wins.
    private OutboundPublishes Publishes
    {
        get
        {
            if (Volatile.Read(ref publishes) is { } made)
            {
                return made;
            }

            var writer = new OutboundPublishes(output, owner, topicAliasMaximum);
            return Interlocked.CompareExchange(ref publishes, writer, null) ?? writer;
        }
    }

    /// <summary>SUBSCRIBE: SUBACK, then the retained messages of each new subscription.</summary>
    public async ValueTask SubscribeAsync(ReadOnlyMemory<byte> body, CancellationToken cancellationToken)
    {
        var packet = SubscribePacket.Parse(body.Span, v5, unsubscribe: false);
        var codes = new byte[packet.Filters.Count];
        var started = new List<(ActiveSubscription Subscription, bool Existed)>();
        refusals = null;
        for (var i = 0; i < packet.Filters.Count; i++)
        {
            var request = packet.Filters[i];
            var qos = request.Qos == 2 && options.DowngradeQos2Subscribe ? (byte)1 : request.Qos;
            var record = new SubscriptionRecord(request.Filter, qos, request.NoLocal, request.RetainAsPublished, request.RetainHandling, packet.SubscriptionIdentifier);
            record = await WithConsumerAsync(record, cancellationToken).ConfigureAwait(false);
            var code = Subscribe(record, out var subscription, out var existed);
            codes[i] = code;
            if (subscription is not null)
            {
                started.Add((subscription, existed));
            }
        }

        output.WriteSubAck(packet.PacketId, codes, v5, unsubscribe: false, refusals?.ToString());

        session.ScheduleSave(store);

        // Retained messages follow the SUBACK (MQTT-3.3.1-6), per the subscription's retain handling: those of the
        // client's account.
        foreach (var (subscription, existed) in started)
        {
            if (subscription.QueueGroup is null && (subscription.Record.RetainHandling == 0 || (subscription.Record.RetainHandling == 1 && !existed)))
            {
                SendRetained(subscription);
            }
        }
    }

    /// <summary>
    /// Gives a QoS 1 or 2 subscription its JetStream consumer (the one it had when the filter is subscribed again or the
    /// session resumes; a shared subscription's is its group's, one for all members), or grants QoS 0 when there is no
    /// JetStream, the filter is not valid (refused next) or the consumer cannot be created. Returns the record as granted.
    /// </summary>
    private async ValueTask<SubscriptionRecord> WithConsumerAsync(SubscriptionRecord record, CancellationToken cancellationToken)
    {
        var previous = subscriptions.TryGetValue(record.Filter, out var active) ? active.Record : null;
        var stored = record.Consumer is not null ? record : previous?.Consumer is not null ? previous : null;
        var shared = SplitShared(record.Filter, out var group, out var filter);
        if (record.Qos == 0 || qosSource.Qos is not { } qos || (shared && (group is null || (v5 && record.NoLocal)))
            || TopicMapper.FilterToSubject(filter, out var subject) != TopicStatus.Ok)
        {
            return record with { Qos = 0, Consumer = null, DeliverSubject = null };
        }

        var (consumer, deliverSubject) = shared ? QosMessages.SharedConsumer(record.Filter)
            : stored is { Consumer: { } kept, DeliverSubject: { } keptSubject } ? (kept, keptSubject) : QosMessages.NewConsumer(session.ClientId);
        string[] subjects = TopicMapper.NeedsParentSubscription(subject) ? [subject, subject[..^2]] : [subject];
        try
        {
            await qos.EnsureConsumerAsync(consumer, subjects, deliverSubject, inflightLimit, group, cancellationToken).ConfigureAwait(false);
        }
        catch (JetStreamApiException ex)
        {
            MqttLog.ConsumerFailed(logger, status.Name, record.Filter, ex.Message);
            return record with { Qos = 0, Consumer = null, DeliverSubject = null };
        }

        return record with { Qos = Math.Min(record.Qos, (byte)2), Consumer = consumer, DeliverSubject = deliverSubject };
    }

    /// <summary>Starts (or replaces) one subscription; returns the SUBACK code.</summary>
    private byte Subscribe(SubscriptionRecord record, out ActiveSubscription? subscription, out bool existed)
    {
        subscription = null;
        existed = false;
        if (SplitShared(record.Filter, out var group, out var filter) && group is null)
        {
            return Refuse(record.Filter, "malformed shared subscription", ReasonCode.TopicFilterInvalid);
        }

        if (!TopicMapper.IsValidFilter(System.Text.Encoding.UTF8.GetBytes(filter)))
        {
            return Refuse(record.Filter, "wildcards must fill whole levels and # must be last", ReasonCode.TopicFilterInvalid);
        }

        if (v5 && record.NoLocal && group is not null)
        {
            // MQTT-3.8.3-4: no local on a shared subscription is a protocol error.
            throw MqttProtocolException.Protocol("no local option on a shared subscription");
        }

        if (TopicMapper.FilterToSubject(filter, out var subject) != TopicStatus.Ok)
        {
            return Refuse(record.Filter, "character not supported for MQTT topics", ReasonCode.TopicFilterInvalid);
        }

        // Internal subjects are out of reach of MQTT subscriptions, as in nats-server.
        if (subject.StartsWith("$MQTT.", StringComparison.Ordinal))
        {
            return Refuse(record.Filter, "reserved for the broker", ReasonCode.NotAuthorized);
        }

        var next = new ActiveSubscription(record, subject, group, filter);
        try
        {
            // The new subscription is in place before the old one goes, so no message is lost (MQTT-3.8.4-3).
            AddBusSubscription(next, subject);
            if (TopicMapper.NeedsParentSubscription(subject))
            {
                AddBusSubscription(next, subject[..^2]);
            }
        }
        catch (BusRefusedException ex)
        {
            // The user's subscribe permissions (or max_subscriptions), with the text a NATS client would get.
            next.Unsubscribe();
            DropConsumer(record, keep: null);
            return Refuse(record.Filter, ex.Message, ReasonCode.NotAuthorized);
        }
        catch (ArgumentException ex)
        {
            next.Unsubscribe();
            DropConsumer(record, keep: null);
            return Refuse(record.Filter, ex.Message, ReasonCode.TopicFilterInvalid);
        }

        if (record.DeliverSubject is { } deliverSubject && qosSource.Qos is { } qos)
        {
            // Allowed to subscribe the subject: its QoS 1 and 2 messages come from the consumer, through the feed the
            // subscription it replaces had when the consumer stays (a client subscribing again after resuming a session).
            if (subscriptions.TryGetValue(record.Filter, out var current) && current.Feed is { } kept && kept.DeliverSubject == deliverSubject)
            {
                current.Feed = null;
                kept.Target = next;
                next.Feed = kept;
            }
            else
            {
                var feed = new DurableFeed(deliverSubject, next);
                feed.Subscription = qos.Subscribe(deliverSubject, next.QueueGroup, (in BusMessage message) => DeliverDurable(feed.Target, message));
                next.Feed = feed;
            }
        }

        if (subscriptions.Remove(record.Filter, out var replaced))
        {
            replaced.Unsubscribe();
            DropConsumer(replaced.Record, keep: record.Consumer);
            existed = true;
        }

        subscriptions.Set(record.Filter, next);
        session.SetSubscription(record);
        subscription = next;
        return record.Qos;
    }

    /// <summary>
    /// Whether <paramref name="filter"/> is shared (<c>$share/&lt;group&gt;/&lt;filter&gt;</c>); its group (null when
    /// malformed: empty, with a wildcard, or without a filter) and the filter without the prefix.
    /// </summary>
    private static bool SplitShared(string filter, out string? group, out string topicFilter)
    {
        group = null;
        topicFilter = filter;
        if (!filter.StartsWith(SharePrefix, StringComparison.Ordinal))
        {
            return false;
        }

        var slash = filter.IndexOf('/', SharePrefix.Length);
        var name = slash < 0 ? string.Empty : filter[SharePrefix.Length..slash];
        topicFilter = slash < 0 ? string.Empty : filter[(slash + 1)..];
        if (name.Length > 0 && name.AsSpan().IndexOfAny("+#") < 0 && topicFilter.Length > 0)
        {
            group = name;
        }

        return true;
    }

    private void AddBusSubscription(ActiveSubscription subscription, string subject)
    {
        IBusClient client = buses.Bus;
        if (v5 && subscription.Record.NoLocal)
        {
            if (!buses.EnsureOwnPublishes())
            {
                throw new BusRefusedException(BusRefusalReason.Unspecified, subject, "maximum connections exceeded");
            }

            client = buses.OwnPublishes!;
        }

        // The subscription receives itself: a delegate over its method was 64 B per subscription, a lambda a closure
        // more (issue 25).
        subscription.Manager = this;
        subscription.AddBusSubscription(client.Subscribe(subject, subscription.QueueGroup, subscription));
    }

    private byte Refuse(string filter, string reason, byte v5Code)
    {
        MqttLog.SubscriptionRefused(logger, status.Name, filter, reason);
        if (v5)
        {
            // The SUBACK's reason string says why, filter by filter.
            refusals ??= new System.Text.StringBuilder();
            refusals.Append(refusals.Length == 0 ? "" : "; ").Append('"').Append(filter).Append("\": ").Append(reason);
        }

        return v5 ? v5Code : (byte)0x80;
    }

    /// <summary>UNSUBSCRIBE: ends the subscriptions and their consumers, then UNSUBACK.</summary>
    public void Unsubscribe(ReadOnlySpan<byte> body)
    {
        var packet = SubscribePacket.Parse(body, v5, unsubscribe: true);
        Span<byte> codes = packet.Filters.Count <= 256 ? stackalloc byte[packet.Filters.Count] : new byte[packet.Filters.Count];
        for (var i = 0; i < packet.Filters.Count; i++)
        {
            var filter = packet.Filters[i].Filter;
            if (subscriptions.Remove(filter, out var subscription))
            {
                subscription.Unsubscribe();
                DropConsumer(subscription.Record, keep: null);
                session.RemoveSubscription(filter);
                codes[i] = ReasonCode.Success;
            }
            else
            {
                codes[i] = ReasonCode.NoSubscriptionExisted;
            }
        }

        output.WriteSubAck(packet.PacketId, codes, v5, unsubscribe: true);

        session.ScheduleSave(store);
    }

    /// <summary>
    /// Subscribes again to what a resumed session had (nats-server does it after CONNACK too), each QoS 1 or 2
    /// subscription on its consumer, which kept the messages that came meanwhile.
    /// </summary>
    public async ValueTask RestoreAsync(CancellationToken cancellationToken)
    {
        foreach (var stored in session.Subscriptions)
        {
            var record = await WithConsumerAsync(stored, cancellationToken).ConfigureAwait(false);
            if (record.Consumer is null && stored.Consumer is not null)
            {
                DropConsumer(stored, keep: null);
            }

            if (Subscribe(record, out _, out _) >= 0x80)
            {
                session.RemoveSubscription(record.Filter);
            }
        }

        session.ScheduleSave(store);
    }

    /// <summary>Deletes the consumer of a subscription that ended, unless the new one keeps it.</summary>
    private void DropConsumer(SubscriptionRecord record, string? keep)
    {
        if (record.Consumer is { } consumer && !string.Equals(consumer, keep, StringComparison.Ordinal) && qosSource.Qos is { } qos)
        {
            // A shared subscription's consumer stays while another session of the account is a member.
            _ = qos.DeleteConsumersAsync(qosSource.ReleasedBy(session.ClientId, [record]), logger);
        }
    }

    /// <summary>Ends every bus subscription (the connection is closing); the session keeps the records.</summary>
    public void RemoveAll()
    {
        foreach (var subscription in subscriptions.ToArray())
        {
            subscription.Unsubscribe();
        }

        subscriptions.Clear();
    }
}
