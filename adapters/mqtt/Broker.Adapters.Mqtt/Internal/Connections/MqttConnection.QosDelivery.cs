using System.Buffers;
using System.Text;
using Broker.Abstractions;
using Broker.Adapters.Mqtt.Internal.Codec;
using Broker.Adapters.Mqtt.Internal.Delivery;
using Broker.Adapters.Mqtt.Internal.Headers;
using Microsoft.Extensions.Logging;

namespace Broker.Adapters.Mqtt.Internal.Connections;

/// <summary>
/// QoS 1 and 2 both ways, on JetStream (<see cref="QosMessages"/>): an MQTT publish at QoS 1 or 2 is acknowledged
/// (PUBACK, PUBREC) once JetStream stored it, in the order the publishes came (MQTT-4.6.0-2); a QoS 1 or 2 subscription
/// is fed by its consumer, each delivery holds a packet identifier until the client's PUBACK or PUBREC acknowledges it
/// to JetStream, and an outgoing QoS 2 exchange then waits in the session for PUBCOMP. Deliveries still in flight when
/// the connection closes are handed back at once, so a resumed session gets them again (with DUP) as it reconnects.
/// </summary>
internal sealed partial class MqttConnection
{
    // Outgoing QoS 1 and 2 deliveries awaiting the client; guarded by writeLock.
    private readonly InflightDeliveries inflight = new();

    // The session's outgoing QoS 2 identifiers between PUBREC and PUBCOMP, which deliveries must not reuse.
    private Func<ushort, bool>? releasingCheck;

    // The client id as UTF-8, for the no-local check of stored messages' origin; made on first use.
    private byte[]? clientIdBytes;

    // Acknowledgements of the client's QoS 1 and 2 publishes, in order, each waiting for its message to be stored.
    private readonly Queue<PublishAck> publishAcks = new();
    private readonly Lock publishAcksLock = new();

    /// <summary>Deliveries in flight at most: the client's receive maximum (MQTT 5), or nats-server's 65535 per session.</summary>
    private int InflightLimit => v5 ? clientReceiveMaximum : ushort.MaxValue;

    private readonly record struct PublishAck(PacketType Type, ushort PacketId, byte Reason, Task? Stored);

    /// <summary>Whether a message came from an MQTT publish at QoS 1 or 2 (and so was also stored for consumers).</summary>
    private static bool PublishedAtQos1Or2(in ReadOnlySequence<byte> headers)
    {
        var block = Contiguous(headers, out var rented);
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
        if (handler.Qos is not { } qos || message.ReplyTo.IsEmpty || !message.Subject.StartsWith(QosMessages.SubjectPrefixBytes))
        {
            // Not a delivery (a status message of the consumer).
            return;
        }

        var ackSubject = Encoding.UTF8.GetString(message.ReplyTo);
        if (closing)
        {
            qos.Nak(ackSubject, TimeSpan.Zero);
            return;
        }

        var subject = message.Subject[QosMessages.SubjectPrefix.Length..];
        var block = Contiguous(message.Headers, out var rented);
        byte published;
        bool ownMessage;
        try
        {
            var view = new HeaderView(block);
            published = view.Qos == 0 ? (byte)1 : view.Qos;
            ownMessage = v5 && subscription.Record.NoLocal && !view.Origin.IsEmpty && view.Origin.SequenceEqual(clientIdBytes ??= Encoding.UTF8.GetBytes(session!.ClientId));
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

        ParseAckSubject(ackSubject, out var consumer, out var delivered, out var sequence);
        var pending = new Inflight(ackSubject, consumer, sequence, Math.Min(published, subscription.Qos), delivered > 1);
        var sent = v5
            ? DeliverV5(subscription, new BusMessage(subject, default, message.Headers, message.Payload), retainedDelivery: false, pending)
            : DeliverV3(subject, message.Payload, retain: false, pending);
        if (!sent)
        {
            // The client has as many in flight as it takes: the consumer offers it again a little later.
            qos.Nak(ackSubject, TimeSpan.FromSeconds(1));
        }
    }

    /// <summary>
    /// The consumer, delivery count and stream sequence of
    /// <c>$JS.ACK.&lt;stream&gt;.&lt;consumer&gt;.&lt;delivered&gt;.&lt;stream seq&gt;...</c>.
    /// </summary>
    private static void ParseAckSubject(string ackSubject, out string? consumer, out ulong delivered, out ulong sequence)
    {
        consumer = null;
        delivered = 0;
        sequence = 0;
        var tokens = ackSubject.Split('.');
        if (tokens.Length >= 6 && ulong.TryParse(tokens[4], out var count) && ulong.TryParse(tokens[5], out var parsed))
        {
            consumer = tokens[3];
            delivered = count;
            sequence = parsed;
        }
    }

    /// <summary>PUBACK, PUBREC or PUBCOMP from the client for a QoS 1 or 2 delivery.</summary>
    private void HandleDeliveryAck(PacketType type, ReadOnlySpan<byte> body)
    {
        var packetId = AckPacket.Parse(body, v5, out var reason);
        Inflight settled = default;
        bool known;
        lock (writeLock)
        {
            known = type != PacketType.PubComp && inflight.TryRemove(packetId, out settled);
        }

        switch (type)
        {
            case PacketType.PubAck:
                if (known && settled.AckSubject is { } ack)
                {
                    handler.Qos?.Ack(ack);
                }

                break;
            case PacketType.PubRec:
                if (known)
                {
                    if (settled.AckSubject is { } received)
                    {
                        handler.Qos?.Ack(received);
                    }

                    if (reason >= 0x80)
                    {
                        // MQTT 5: the client refused the message; the exchange ends here (MQTT-4.3.3-4).
                        break;
                    }

                    session!.AddReleasing(packetId);
                    session.ScheduleSave(handler.Sessions.Store);
                    WriteAck(PacketType.PubRel, packetId, ReasonCode.Success);
                }
                else
                {
                    // A PUBREC sent again (its PUBREL was lost): release again; an unknown one is answered as nats-server does.
                    WriteAck(PacketType.PubRel, packetId, session!.IsReleasing(packetId) || !v5 ? ReasonCode.Success : ReasonCode.PacketIdentifierNotFound);
                }

                break;
            case PacketType.PubComp:
                if (session!.RemoveReleasing(packetId))
                {
                    session.ScheduleSave(handler.Sessions.Store);
                }

                break;
        }
    }

    /// <summary>Sends PUBREL again for the outgoing QoS 2 exchanges a resumed session left between PUBREC and PUBCOMP.</summary>
    private void ResendReleases()
    {
        foreach (var packetId in session!.Releasing)
        {
            WriteAck(PacketType.PubRel, packetId, ReasonCode.Success);
        }
    }

    /// <summary>Hands the deliveries still in flight back to their consumers (the connection is closing).</summary>
    private void ReturnInflight()
    {
        List<Inflight> left;
        lock (writeLock)
        {
            left = inflight.TakeAll();
        }

        foreach (var delivery in left)
        {
            if (delivery.AckSubject is { } ack)
            {
                handler.Qos?.Nak(ack, TimeSpan.Zero);
            }
        }
    }

    /// <summary>
    /// Acknowledges a QoS 1 or 2 publish of the client: at once when nothing is waiting, else after the acknowledgements
    /// before it; <paramref name="stored"/> is JetStream storing the message, which the acknowledgement waits for.
    /// </summary>
    private void AcknowledgePublish(PacketType type, ushort packetId, byte reason, Task? stored = null)
    {
        lock (publishAcksLock)
        {
            if (stored is null && publishAcks.Count == 0)
            {
                WriteAck(type, packetId, reason);
                return;
            }

            publishAcks.Enqueue(new PublishAck(type, packetId, reason, stored));
        }

        if (stored is null || stored.IsCompleted)
        {
            DrainPublishAcks(fromReadLoop: true);
            return;
        }

        stored.ContinueWith(static (_, state) => ((MqttConnection)state!).DrainPublishAcks(fromReadLoop: false), this, CancellationToken.None, TaskContinuationOptions.ExecuteSynchronously, TaskScheduler.Default);
    }

    private void DrainPublishAcks(bool fromReadLoop)
    {
        var failed = false;
        lock (publishAcksLock)
        {
            while (publishAcks.TryPeek(out var head) && (head.Stored is null || head.Stored.IsCompleted))
            {
                publishAcks.Dequeue();
                var reason = head.Reason;
                if (head.Stored is { IsCompletedSuccessfully: false } task)
                {
                    if (head.Type == PacketType.PubComp)
                    {
                        // The record of the identifier is still there: it waits for PUBREL again, which the client sends
                        // again on reconnect, and the record is removed then.
                        MqttLog.SessionStoreFailed(logger, session!.ClientId, "QoS 2 release", task.Exception?.InnerException ?? new OperationCanceledException());
                        session.RestoreAwaitingRelease([head.PacketId]);
                        failed = true;
                        continue;
                    }

                    MqttLog.QosStoreFailed(logger, name, task.Exception?.InnerException?.Message ?? "cancelled");
                    if (head.Type == PacketType.PubRec && session!.Release(head.PacketId) && session.Persistent)
                    {
                        // The identifier's record may have been written (the message's store is what failed): it must
                        // not outlive the exchange, which ends here.
                        ForgetAwaitingRelease(head.PacketId);
                    }

                    if (!v5)
                    {
                        // MQTT 3.1.1 has no negative acknowledgement: closing makes the client send the message again.
                        failed = true;
                        continue;
                    }

                    // An error reason also ends a QoS 2 exchange: no PUBREL follows (released above).
                    reason = ReasonCode.UnspecifiedError;
                }

                if (!failed)
                {
                    WriteAck(head.Type, head.PacketId, reason);
                }
            }
        }

        if (failed)
        {
            RequestClose("a QoS 1 or 2 message or its QoS 2 state could not be stored", null);
        }
        else if (!fromReadLoop)
        {
            // JetStream's answers come one by one: their acknowledgements go out in one flush.
            QueueFlush();
        }
    }

    /// <summary>Removes the record of an identifier awaiting PUBREL in the background; a failure is logged.</summary>
    private void ForgetAwaitingRelease(ushort packetId)
    {
        var clientId = session!.ClientId;
        handler.Sessions.Store.ReleaseAsync(clientId, packetId).ContinueWith(
            static (task, state) =>
            {
                var (logger, clientId) = ((ILogger, string))state!;
                MqttLog.SessionStoreFailed(logger, clientId, "QoS 2 release", task.Exception!.InnerException!);
            },
            (logger, clientId),
            CancellationToken.None,
            TaskContinuationOptions.OnlyOnFaulted,
            TaskScheduler.Default);
    }
}
