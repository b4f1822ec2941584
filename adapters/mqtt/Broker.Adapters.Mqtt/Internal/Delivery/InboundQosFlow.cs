using Broker.Adapters.Mqtt.Internal.Codec;
using Broker.Adapters.Mqtt.Internal.Connections;
using Broker.Adapters.Mqtt.Internal.Sessions;
using Microsoft.Extensions.Logging;

namespace Broker.Adapters.Mqtt.Internal.Delivery;

/// <summary>
/// The client's QoS 1 and 2 publishes, from PUBLISH to their acknowledgement: a QoS 1 or 2 publish is acknowledged
/// (PUBACK, PUBREC) once JetStream stored it, in the order the publishes came (MQTT-4.6.0-2); a QoS 2 exchange holds
/// its packet identifier in the session until PUBREL, so a resent PUBLISH is not delivered twice. A persistent
/// session whose store keeps them (JetStream) holds the publish itself in the store until PUBREL, which delivers it
/// (the specification's method A, as nats-server): exactly once across a restart. Otherwise the publish is delivered
/// when it comes (method B).
/// </summary>
internal sealed class InboundQosFlow
{
    // Acknowledgements of the client's QoS 1 and 2 publishes, in order, each waiting for its message to be stored; made
    // when the first has to wait (a subscriber that never publishes at QoS 1 or 2 holds none; issue 25).
    private Queue<PublishAck>? publishAcks;
    private readonly Lock publishAcksLock = new();
    private readonly PacketOutput output;
    private readonly MqttSession session;
    private readonly ISessionStore store;
    private readonly ConnectionStatus status;
    private readonly ILogger logger;
    private readonly bool v5;
    private readonly int receiveMaximum;

    /// <summary><paramref name="receiveMaximum"/>: the QoS 2 exchanges an MQTT 5 client may have open at once (the broker's receive maximum).</summary>
    public InboundQosFlow(PacketOutput output, MqttSession session, ISessionStore store, ConnectionStatus status, ILogger logger, bool v5, int receiveMaximum)
    {
        this.output = output;
        this.session = session;
        this.store = store;
        this.status = status;
        this.logger = logger;
        this.v5 = v5;
        this.receiveMaximum = receiveMaximum;
    }

    private readonly record struct PublishAck(PacketType Type, ushort PacketId, byte Reason, Task? Stored, string? Text = null, HeldPublish? Held = null);

    /// <summary>Whether the client's QoS 2 publishes are held until PUBREL (<see cref="Hold"/>) rather than delivered at once.</summary>
    public bool HoldsQos2 => session.Persistent && store.HoldsQos2;

    /// <summary>
    /// Starts the exchange of a QoS 2 publish. False for a resend whose PUBREL has not come: delivered already, its
    /// PUBREC is sent again. An MQTT 5 client past the receive maximum violates the protocol.
    /// </summary>
    public bool TryBegin(ushort packetId, bool duplicate)
    {
        if (!session.TryAwaitRelease(packetId, duplicate))
        {
            // A resent QoS 2 PUBLISH whose PUBREL has not come: delivered already (method B), acknowledge again.
            Acknowledge(PacketType.PubRec, packetId, ReasonCode.Success);
            return false;
        }

        if (v5 && session.AwaitingReleaseCount > receiveMaximum)
        {
            throw new MqttProtocolException(ReasonCode.ReceiveMaximumExceeded, "receive maximum exceeded");
        }

        return true;
    }

    /// <summary>A QoS 1 or 2 publish went out: PUBACK or PUBREC once <paramref name="stored"/> (JetStream storing it, or <see langword="null"/>) completed.</summary>
    public void Published(byte qos, ushort packetId, Task? stored)
        => Acknowledge(qos == 1 ? PacketType.PubAck : PacketType.PubRec, packetId, ReasonCode.Success, stored);

    /// <summary>A QoS 2 publish of an exchange <see cref="TryBegin"/> started, held until PUBREL: PUBREC once it is stored.</summary>
    public void Hold(HeldPublish held)
    {
        session.Hold(held);
        Acknowledge(PacketType.PubRec, held.PacketId, ReasonCode.Success, store.HoldAsync(session.ClientId, held), held: held);
    }

    /// <summary>
    /// PUBREL of a held publish, whose delivery <paramref name="delivered"/> (its store for QoS 1 and 2 subscriptions,
    /// or <see langword="null"/>) is under way: PUBCOMP once it is stored and the held record is gone.
    /// </summary>
    public void Released(HeldPublish held, Task? delivered)
    {
        var done = delivered is null || delivered.IsCompletedSuccessfully
            ? store.ReleaseAsync(session.ClientId, held)
            : delivered.ContinueWith(
                static (task, state) =>
                {
                    var (flow, held) = ((InboundQosFlow, HeldPublish))state!;
                    return task.IsCompletedSuccessfully ? flow.store.ReleaseAsync(flow.session.ClientId, held) : task;
                },
                (this, held),
                CancellationToken.None,
                TaskContinuationOptions.ExecuteSynchronously,
                TaskScheduler.Default).Unwrap();
        Acknowledge(PacketType.PubComp, held.PacketId, ReasonCode.Success, done, held: held);
    }

    /// <summary>
    /// A publish that was not delivered: acknowledged with <paramref name="reason"/> (nothing for QoS 0);
    /// <paramref name="endExchange"/> releases a started QoS 2 exchange, as an error reason ends it (no PUBREL follows).
    /// </summary>
    public void Refused(byte qos, ushort packetId, byte reason, bool endExchange, string? reasonString = null)
    {
        if (qos == 1)
        {
            Acknowledge(PacketType.PubAck, packetId, reason, text: reasonString);
        }
        else if (qos == 2)
        {
            if (endExchange)
            {
                session.Release(packetId);
            }

            Acknowledge(PacketType.PubRec, packetId, reason, text: reasonString);
        }
    }

    /// <summary>PUBREL of a publish not held (<see cref="Released"/> for those): ends the exchange, PUBCOMP at once.</summary>
    public void Release(ushort packetId)
        => output.WriteAck(PacketType.PubComp, packetId, v5, session.Release(packetId) ? ReasonCode.Success : ReasonCode.PacketIdentifierNotFound);

    /// <summary>
    /// Acknowledges a QoS 1 or 2 publish of the client: at once when nothing is waiting, else after the acknowledgements
    /// before it; <paramref name="stored"/> is JetStream storing the message, which the acknowledgement waits for.
    /// </summary>
    private void Acknowledge(PacketType type, ushort packetId, byte reason, Task? stored = null, string? text = null, HeldPublish? held = null)
    {
        lock (publishAcksLock)
        {
            if (stored is null && (publishAcks is null || publishAcks.Count == 0))
            {
                output.WriteAck(type, packetId, v5, reason, text);
                return;
            }

            (publishAcks ??= new()).Enqueue(new PublishAck(type, packetId, reason, stored, text, held));
        }

        if (stored is null || stored.IsCompleted)
        {
            Drain(fromReadLoop: true);
            return;
        }

        stored.ContinueWith(static (_, state) => ((InboundQosFlow)state!).Drain(fromReadLoop: false), this, CancellationToken.None, TaskContinuationOptions.ExecuteSynchronously, TaskScheduler.Default);
    }

    private void Drain(bool fromReadLoop)
    {
        var failed = false;
        lock (publishAcksLock)
        {
            while (publishAcks is not null && publishAcks.TryPeek(out var head) && (head.Stored is null || head.Stored.IsCompleted))
            {
                publishAcks.Dequeue();
                var reason = head.Reason;
                if (head.Stored is { IsCompletedSuccessfully: false } task)
                {
                    if (head.Type == PacketType.PubComp)
                    {
                        // The held record is still there: it waits for PUBREL again, which the client sends again on
                        // reconnect; the delivery is then stored again under the same message id (JetStream drops the copy).
                        MqttLog.SessionStoreFailed(logger, session.ClientId, "QoS 2 release", task.Exception?.InnerException ?? new OperationCanceledException());
                        session.RestoreHeld([head.Held!]);
                        failed = true;
                        continue;
                    }

                    MqttLog.QosStoreFailed(logger, status.Name, task.Exception?.InnerException?.Message ?? "cancelled");
                    if (head.Type == PacketType.PubRec && session.Release(head.PacketId) && head.Held is { } failedHold)
                    {
                        // The held record may have been written (its answer is what failed): it must not outlive the
                        // exchange, which ends here.
                        ForgetHeld(failedHold);
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
                    output.WriteAck(head.Type, head.PacketId, v5, reason, reason == ReasonCode.UnspecifiedError && head.Text is null ? "the message could not be stored" : head.Text);
                }
            }
        }

        if (failed)
        {
            status.RequestClose("a QoS 1 or 2 message or its QoS 2 state could not be stored");
        }
        else if (!fromReadLoop)
        {
            // JetStream's answers come one by one: their acknowledgements go out in one flush.
            output.QueueFlush();
        }
    }

    /// <summary>Removes the record of a held publish in the background; a failure is logged.</summary>
    private void ForgetHeld(HeldPublish held)
    {
        var clientId = session.ClientId;
        store.ReleaseAsync(clientId, held).ContinueWith(
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
