using System.Buffers;
using System.Text;
using Broker.Abstractions;
using Broker.Adapters.Mqtt.Internal.Codec;
using Broker.Adapters.Mqtt.Internal.Delivery;
using Broker.Adapters.Mqtt.Internal.Headers;
using Broker.Adapters.Mqtt.Internal.Sessions;

namespace Broker.Adapters.Mqtt.Internal.Connections;

/// <summary>
/// What reaches a subscription: live messages from its bus subscriptions (on the producer's thread), QoS 1 and 2
/// messages from its JetStream consumer, at the lower of the two QoS, and the retained messages its filter matches
/// when it starts. Each is sent through <see cref="OutboundPublishes"/>; a consumer's delivery the client cannot take
/// now (receive maximum) is handed back to the consumer, which offers it again a little later.
/// </summary>
internal sealed partial class SubscriptionManager
{
    // The client id as UTF-8, for the no-local check of stored messages' origin; made on first use.
    private byte[]? clientIdBytes;

    /// <summary>A live message from one of the subscription's bus subscriptions, on the producer's thread.</summary>
    internal void Deliver(ActiveSubscription subscription, in BusMessage message)
    {
        if (status.IsClosing)
        {
            return;
        }

        var subject = message.Subject;
        if (subscription.Reserved && !subject.IsEmpty && subject[0] == (byte)'$')
        {
            return;
        }

        if (!message.Headers.IsEmpty && NatsHeaderBlock.IsNoResponders(message.Headers))
        {
            // The broker's answer to a request nobody received is not a message for MQTT subscribers.
            return;
        }

        if (subscription.Record.Consumer is not null && !message.Headers.IsEmpty && PublishedAtQos1Or2(message.Headers))
        {
            // An MQTT QoS 1 or 2 publish reaches a QoS 1 or 2 subscription through its consumer (DeliverDurable).
            return;
        }

        if (v5)
        {
            Publishes.SendV5(subscription, message, retainedDelivery: false);
        }
        else
        {
            Publishes.SendV3(subject, message.Payload, retain: false);
        }
    }

    /// <summary>Whether a message came from an MQTT publish at QoS 1 or 2 (and so was also stored for consumers).</summary>
    private static bool PublishedAtQos1Or2(in ReadOnlySequence<byte> headers)
    {
        var block = OutboundPublishes.Contiguous(headers, out var rented);
        try
        {
            return new HeaderView(block).Qos > 0;
        }
        finally
        {
            if (rented is not null)
            {
                ArrayPool<byte>.Shared.Return(rented);
            }
        }
    }

    /// <summary>A message from a subscription's consumer: sent at the lower of its and the subscription's QoS.</summary>
    private void DeliverDurable(ActiveSubscription subscription, in BusMessage message)
    {
        if (qosSource.Qos is not { } qos || message.ReplyTo.IsEmpty || !message.Subject.StartsWith(QosMessages.SubjectPrefixBytes))
        {
            // Not a delivery (a status message of the consumer).
            return;
        }

        var ackSubject = Encoding.UTF8.GetString(message.ReplyTo);
        if (status.IsClosing)
        {
            qos.Nak(ackSubject, TimeSpan.Zero);
            return;
        }

        var subject = message.Subject[QosMessages.SubjectPrefix.Length..];
        ParseAckSubject(ackSubject, out var consumer, out var delivered, out var sequence, out var storedAt);
        var block = OutboundPublishes.Contiguous(message.Headers, out var rented);
        byte published;
        bool ownMessage;
        bool expired;
        uint waited;
        try
        {
            var view = new HeaderView(block);
            published = view.Qos == 0 ? (byte)1 : view.Qos;
            ownMessage = v5 && subscription.Record.NoLocal && !view.Origin.IsEmpty && view.Origin.SequenceEqual(clientIdBytes ??= Encoding.UTF8.GetBytes(session.ClientId));
            expired = HasExpired(view.HasMessageExpiry, view.MessageExpiry, storedAt / 1_000_000, out waited);
        }
        finally
        {
            if (rented is not null)
            {
                ArrayPool<byte>.Shared.Return(rented);
            }
        }

        if (ownMessage || (subscription.Reserved && !subject.IsEmpty && subject[0] == (byte)'$'))
        {
            qos.Ack(ackSubject);
            return;
        }

        var pending = new Inflight(ackSubject, consumer, sequence, Math.Min(published, subscription.Qos), delivered > 1);
        if (expired)
        {
            // MQTT-3.3.2-5: its message expiry interval passed while it waited (for a disconnected session, say).
            Publishes.Drop(subject, pending, "message expiry interval passed");
            return;
        }

        var sent = v5
            ? Publishes.SendV5(subscription, new BusMessage(subject, default, message.Headers, message.Payload), retainedDelivery: false, pending, waited)
            : Publishes.SendV3(subject, message.Payload, retain: false, pending);
        if (!sent)
        {
            // The client has as many in flight as it takes: the consumer offers it again a little later.
            qos.Nak(ackSubject, TimeSpan.FromSeconds(1));
        }
    }

    /// <summary>
    /// The consumer, delivery count, stream sequence and time stored (nanoseconds since the Unix epoch, 0 if absent) of
    /// <c>$JS.ACK.&lt;stream&gt;.&lt;consumer&gt;.&lt;delivered&gt;.&lt;stream seq&gt;.&lt;consumer seq&gt;.&lt;timestamp&gt;...</c>.
    /// </summary>
    private static void ParseAckSubject(string ackSubject, out string? consumer, out ulong delivered, out ulong sequence, out long timestamp)
    {
        consumer = null;
        delivered = 0;
        sequence = 0;
        timestamp = 0;
        var tokens = ackSubject.Split('.');
        if (tokens.Length >= 6 && ulong.TryParse(tokens[4], out var count) && ulong.TryParse(tokens[5], out var parsed))
        {
            consumer = tokens[3];
            delivered = count;
            sequence = parsed;
            if (tokens.Length >= 8 && long.TryParse(tokens[7], out var stored))
            {
                timestamp = stored;
            }
        }
    }

    /// <summary>
    /// Whether a message with a message expiry interval, kept since <paramref name="keptSinceMs"/> (Unix milliseconds;
    /// 0: not known, never expired), expired; <paramref name="waitedSeconds"/> is how long it waited, in whole seconds,
    /// which MQTT 5 deliveries take off the interval (MQTT-3.3.2-6).
    /// </summary>
    private static bool HasExpired(bool hasExpiry, uint expirySeconds, long keptSinceMs, out uint waitedSeconds)
    {
        waitedSeconds = 0;
        if (!hasExpiry || keptSinceMs <= 0)
        {
            return false;
        }

        var waitedMs = Math.Max(0, DateTimeOffset.UtcNow.ToUnixTimeMilliseconds() - keptSinceMs);
        waitedSeconds = (uint)Math.Min(waitedMs / 1000, uint.MaxValue);
        return waitedMs >= expirySeconds * 1000L;
    }

    /// <summary>
    /// Sends again, with DUP, the shared subscriptions' QoS 2 deliveries kept for a resumed session (MQTT-4.8.2-4); one
    /// whose subscription is gone is dropped. Those past the client's receive maximum wait for its next connection.
    /// </summary>
    public void SendKept()
    {
        foreach (var kept in session.Kept)
        {
            if (!subscriptions.TryGetValue(kept.Filter, out var subscription) || subscription.Qos < 2)
            {
                session.RemoveKept(kept.Sequence);
                session.ScheduleSave(store);
                continue;
            }

            var subject = Encoding.UTF8.GetBytes(kept.Subject);
            var payload = new ReadOnlySequence<byte>(kept.Payload);
            var pending = new Inflight(null, OutboundQosFlow.KeptConsumer, kept.Sequence, 2, Redelivered: true);
            var sent = v5
                ? Publishes.SendV5(subscription, new BusMessage(subject, default, new ReadOnlySequence<byte>(kept.Headers), payload), retainedDelivery: false, pending)
                : Publishes.SendV3(subject, payload, retain: false, pending);
            if (!sent)
            {
                break;
            }
        }
    }

    /// <summary>Sends the retained messages matching a new subscription, with RETAIN set (MQTT-3.3.1-8).</summary>
    private void SendRetained(ActiveSubscription subscription)
    {
        foreach (var retained in retained.Match(subscription.TopicFilter))
        {
            if (subscription.Reserved && retained.Subject.StartsWith('$'))
            {
                continue;
            }

            // A live message on a denied subject is filtered at delivery; a retained one never passes there.
            if (!buses.Bus.MayReceive(retained.Subject))
            {
                continue;
            }

            DeliverRetained(subscription, retained);
        }
    }

    private void DeliverRetained(ActiveSubscription subscription, RetainedMessage retained)
    {
        var subject = System.Text.Encoding.UTF8.GetBytes(retained.Subject);
        var payload = new ReadOnlySequence<byte>(retained.Payload);
        uint waited = 0;
        if (retained.Properties.Length > 0)
        {
            var expiryReader = new PropertyReader(retained.Properties);
            var expiry = MessageProperties.Read(ref expiryReader, will: false);
            if (HasExpired(expiry.HasMessageExpiry, expiry.MessageExpiry, retained.SetAt, out waited))
            {
                // MQTT 5 section 3.3.2.3.3: an expired retained message is discarded, the topic has none any more.
                this.retained.RemoveExpired(retained);
                return;
            }
        }

        // At the lower of the two QoS (MQTT-3.8.4-8); not on a consumer, so the client's acknowledgement settles it here.
        var pending = new Inflight(null, null, 0, Math.Min(retained.Qos, subscription.Qos));
        bool sent;
        if (!v5)
        {
            sent = Publishes.SendV3(subject, payload, retain: true, pending);
        }
        else
        {
            var block = new ArrayBufferWriter<byte>(64);
            var reader = new PropertyReader(retained.Properties);
            var properties = MessageProperties.Read(ref reader, will: false);
            MqttHeaders.Write(block, retained.Qos, retain: true, properties, default, default);
            sent = Publishes.SendV5(subscription, new BusMessage(subject, default, new ReadOnlySequence<byte>(block.WrittenMemory), payload), retainedDelivery: true, pending, waited);
        }

        if (!sent)
        {
            MqttLog.DeliveryDropped(logger, status.Name, retained.Topic, "the client has as many QoS 1 and 2 messages in flight as it accepts");
        }
    }
}
