using Broker.Adapters.Mqtt.Internal.Codec;
using Broker.Adapters.Mqtt.Internal.Connections;
using Broker.Adapters.Mqtt.Internal.Sessions;
using Microsoft.Extensions.Logging;

namespace Broker.Adapters.Mqtt.Internal.Delivery;

/// <summary>
/// QoS 1 and 2 deliveries to the client, from PUBLISH to their end: each holds a packet identifier until the client's
/// PUBACK or PUBREC acknowledges it to JetStream (<see cref="QosMessages"/>), at most <see cref="Limit"/> at once; an
/// outgoing QoS 2 exchange then waits in the session for PUBCOMP, and its identifier is not reused meanwhile.
/// Deliveries still in flight when the connection closes are handed back at once, so a resumed session gets them again
/// (with DUP) as it reconnects. The deliveries in flight are guarded by the connection's write lock, as a delivery
/// takes its identifier in the same step as it is written.
/// </summary>
internal sealed class OutboundQosFlow : IOutboundQosSource
{
    // The output's lock (PacketOutput.writeLock, read through the output: a field of its own was 8 B): guards inflight,
    // which is made with the first QoS 1 or 2 delivery (a QoS 0 subscriber never holds it; issue 25).
    private object writeLock => output.WriteLock;
    private InflightDeliveries? inflight;
    private readonly PacketOutput output;
    private readonly MqttSession session;
    private readonly ISessionStore store;
    private readonly IQosSource qos;
    private readonly bool v5;

    /// <summary><paramref name="limit"/>: deliveries in flight at most, the client's receive maximum (MQTT 5) or nats-server's 65535 per session.</summary>
    public OutboundQosFlow(PacketOutput output, MqttSession session, ISessionStore store, IQosSource qos, bool v5, int limit)
    {
        this.output = output;
        this.session = session;
        this.store = store;
        this.qos = qos;
        this.v5 = v5;
        Limit = limit;
    }

    /// <summary>Deliveries in flight at most (also the consumers' max_ack_pending).</summary>
    public int Limit { get; }

    OutboundQosFlow IOutboundQosSource.OutboundQos => this;

    /// <summary>
    /// Gives a QoS 1 or 2 delivery its packet identifier (the one it had when it is a redelivery still in flight, then
    /// <paramref name="duplicate"/>); false when <see cref="Limit"/> deliveries are in flight. Under the write lock,
    /// in the step that writes the delivery.
    /// </summary>
    public bool TryAssign(in Inflight pending, out ushort packetId, out bool duplicate)
        => (inflight ??= new InflightDeliveries()).TryAdd(pending, Limit, session, out packetId, out duplicate);

    /// <summary>
    /// A delivery the broker drops instead of sending (too large for the client, MQTT-3.1.2-25; expired,
    /// MQTT-3.3.2-5): settled as if the client had acknowledged it, so its consumer does not offer it again. Not under
    /// the write lock.
    /// </summary>
    public void Discard(in Inflight delivery)
    {
        if (delivery.Consumer == KeptConsumer && session.RemoveKept(delivery.Sequence))
        {
            lock (writeLock)
            {
                inflight?.RemoveMessage(delivery);
            }

            session.ScheduleSave(store);
            return;
        }

        if (delivery.AckSubject is not { } ack)
        {
            return;
        }

        lock (writeLock)
        {
            inflight?.RemoveMessage(delivery);
        }

        qos.Qos?.Ack(ack);
    }

    /// <summary>PUBACK, PUBREC or PUBCOMP from the client for a QoS 1 or 2 delivery.</summary>
    public void Acknowledged(PacketType type, ReadOnlySpan<byte> body)
    {
        var packetId = AckPacket.Parse(body, v5, out var reason);
        Inflight settled = default;
        bool known;
        lock (writeLock)
        {
            known = type != PacketType.PubComp && inflight is { } table && table.TryRemove(packetId, out settled);
        }

        switch (type)
        {
            case PacketType.PubAck:
                if (known && settled.AckSubject is { } ack)
                {
                    qos.Qos?.Ack(ack);
                }

                break;
            case PacketType.PubRec:
                if (known && settled.Consumer == KeptConsumer)
                {
                    // A kept delivery completed to its member (MQTT-4.8.2-4): the PUBREL state replaces it in the session.
                    session.RemoveKept(settled.Sequence);
                }

                if (known)
                {
                    if (settled.AckSubject is { } received)
                    {
                        qos.Qos?.Ack(received);
                    }

                    if (reason >= 0x80)
                    {
                        // MQTT 5: the client refused the message; the exchange ends here (MQTT-4.3.3-4).
                        break;
                    }

                    session.AddReleasing(packetId);
                    session.ScheduleSave(store);
                    output.WriteAck(PacketType.PubRel, packetId, v5, ReasonCode.Success);
                }
                else
                {
                    // A PUBREC sent again (its PUBREL was lost): release again; an unknown one is answered as nats-server does.
                    output.WriteAck(PacketType.PubRel, packetId, v5, session.IsReleasing(packetId) || !v5 ? ReasonCode.Success : ReasonCode.PacketIdentifierNotFound);
                }

                break;
            case PacketType.PubComp:
                if (session.RemoveReleasing(packetId))
                {
                    session.ScheduleSave(store);
                }

                break;
        }
    }

    /// <summary>Sends PUBREL again for the outgoing QoS 2 exchanges a resumed session left between PUBREC and PUBCOMP.</summary>
    public void ResendReleases()
    {
        foreach (var packetId in session.Releasing)
        {
            output.WriteAck(PacketType.PubRel, packetId, v5, ReasonCode.Success);
        }
    }

    /// <summary>
    /// Hands the deliveries still in flight back to their consumers (the connection is closing), except a shared
    /// subscription's QoS 2 ones: those stay with the member's session, sent again when it reconnects (MQTT-4.8.2-4),
    /// and never go to another member (MQTT-4.8.2-5), so they are taken off the consumer (a clean session's are
    /// dropped with it). QoS 1 ones go to another member, as the standard advises.
    /// </summary>
    public async Task ReturnInflightAsync(ILogger logger)
    {
        List<Inflight>? left;
        lock (writeLock)
        {
            left = inflight?.TakeAll();
        }

        if (left is null)
        {
            return;
        }

        List<Inflight>? shared = null;
        foreach (var delivery in left)
        {
            if (delivery.AckSubject is not { } ack)
            {
                continue;
            }

            if (delivery.Qos == 2 && delivery.Consumer is { } consumer && QosMessages.IsShared(consumer))
            {
                (shared ??= []).Add(delivery);
                continue;
            }

            qos.Qos?.Nak(ack, TimeSpan.Zero);
        }

        if (shared is not null && qos.Qos is { } messages)
        {
            await KeepAsync(messages, shared, logger).ConfigureAwait(false);
        }
    }

    private async Task KeepAsync(QosMessages messages, List<Inflight> shared, ILogger logger)
    {
        var subscriptions = session.Subscriptions;
        var kept = new List<Inflight>(shared.Count);
        foreach (var delivery in shared)
        {
            var filter = subscriptions.FirstOrDefault(s => s.Consumer == delivery.Consumer)?.Filter;
            if (!session.Persistent || filter is null)
            {
                // The session ends with the connection (or left the group): the message goes to no other member.
                kept.Add(delivery);
                continue;
            }

            try
            {
                if (await messages.LoadAsync(delivery.Sequence).ConfigureAwait(false) is { } stored)
                {
                    session.Keep(new KeptDelivery(filter, stored.Subject[QosMessages.SubjectPrefix.Length..], stored.Headers, stored.Data, delivery.Sequence));
                }

                kept.Add(delivery);
            }
            catch (Exception ex) when (ex is JetStream.JetStreamApiException or ObjectDisposedException or OperationCanceledException)
            {
                // Not read: it stays on the consumer, for another member (as QoS 1).
                MqttLog.SessionStoreFailed(logger, session.ClientId, "shared QoS 2 delivery", ex);
                messages.Nak(delivery.AckSubject!, TimeSpan.Zero);
            }
        }

        if (session.Persistent && kept.Count > 0)
        {
            try
            {
                // Stored with the session before the consumer lets it go.
                await store.SaveAsync(session.ToRecord(), CancellationToken.None).ConfigureAwait(false);
            }
            catch (Exception ex) when (ex is JetStream.JetStreamApiException or ObjectDisposedException or OperationCanceledException)
            {
                MqttLog.SessionStoreFailed(logger, session.ClientId, "shared QoS 2 delivery", ex);
                foreach (var delivery in kept)
                {
                    session.RemoveKept(delivery.Sequence);
                    messages.Nak(delivery.AckSubject!, TimeSpan.Zero);
                }

                return;
            }
        }

        foreach (var delivery in kept)
        {
            messages.Ack(delivery.AckSubject!);
        }
    }

    /// <summary>The <see cref="Inflight.Consumer"/> of a kept delivery sent again (<see cref="MqttSession.Kept"/>).</summary>
    public const string KeptConsumer = "$kept";
}
