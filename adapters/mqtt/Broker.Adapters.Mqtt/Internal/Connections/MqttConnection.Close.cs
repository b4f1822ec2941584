using Broker.Abstractions;
using System.Buffers;
using Broker.Adapters.Mqtt.Internal.Codec;
using Broker.Adapters.Mqtt.Internal.JetStream;
using Broker.Adapters.Mqtt.Internal.Sessions;
using Broker.Adapters.Mqtt.Internal.Headers;
using Broker.Adapters.Mqtt.Internal.Topics;

namespace Broker.Adapters.Mqtt.Internal.Connections;

/// <summary>Ending a connection: DISCONNECT both ways, protocol violations, keep alive, takeover, the will.</summary>
internal sealed partial class MqttConnection
{
    private uint? disconnectExpiry;

    // Set when a takeover ended the session: the will goes at once, whatever its delay.
    private volatile bool willWithoutDelay;

    /// <summary>Called by the handler's timer: CONNECT timeout, then the keep alive (1.5 times the interval, MQTT-3.1.2-24).</summary>
    public void CheckTimers(long now)
    {
        if (status.IsClosing)
        {
            return;
        }

        if (!packets.IsConnected)
        {
            // Counted from when the account's state was loaded at the earliest: a CONNECT waits for it (MqttAccount.Ready).
            if (packets.ConnectTimedOut(now, accountState?.ReadyAt ?? 0, Options.ConnectTimeout))
            {
                MqttLog.ConnectTimeout(Logger, status.Name, Options.ConnectTimeout);
                RequestClose("authentication timeout", null);
            }

            return;
        }

        if (packets.KeepAliveExpired(now))
        {
            MqttLog.KeepAliveExpired(Logger, status.Name, keepAliveSeconds);
            RequestClose("keep alive timeout", ReasonCode.KeepAliveTimeout);
        }
    }

    /// <summary>
    /// Another connection took the session over (MQTT-3.1.4-3). MQTT 3.1.1: closed without its will, as nats-server
    /// does. MQTT 5 (section 3.1.3.2.2): the will is sent at once unless the newcomer resumed the session and the will
    /// has a delay (MQTT-3.1.3-9), then it is dropped; a clean start ends the session, which sends it (MQTT-3.1.2-8).
    /// </summary>
    public void TakeOver(bool sessionResumed)
    {
        if (!v5 || (sessionResumed && will is { DelaySeconds: > 0 }))
        {
            will = null;
        }
        else
        {
            willWithoutDelay = true;
        }

        RequestClose("session taken over", ReasonCode.SessionTakenOver);
    }

    /// <summary>
    /// A reload removed the client's account or took its JetStream away (<see cref="Accounts.MqttAccounts"/>): closed
    /// without its will (MQTT 5: DISCONNECT "administrative action"), its session cannot be kept any longer.
    /// </summary>
    public void CloseForAccountChange(string reason)
    {
        will = null;
        RequestClose(reason, ReasonCode.AdministrativeAction);
    }

    /// <summary>Closes from outside the read loop: the loop sees its read cancelled and tears down.</summary>
    private void RequestClose(string reason, byte? disconnectReason)
    {
        status.NoteReason(reason);
        if (disconnectReason is { } code)
        {
            SendDisconnect(code, reason);
        }

        status.MarkClosing();
        status.WakeReader();
    }

    private void OnViolation(MqttProtocolException ex)
    {
        status.NoteReason(ex.Message);
        MqttLog.ProtocolViolation(Logger, status.Name, ex.Message);

        if (session is not null)
        {
            SendDisconnect(ex.Reason, ex.Message);
        }
    }

    /// <summary>An MQTT 5 DISCONNECT from the server (MQTT 3.1.1 has none: the connection is just closed).</summary>
    private void SendDisconnect(byte reason, string text)
    {
        if (!v5 || session is null)
        {
            return;
        }

        output.WriteDisconnect(reason, requestProblemInformation ? text : null, clientMaximumPacketSize);
    }

    private void HandleDisconnect(ReadOnlySpan<byte> body)
    {
        var reason = AckPacket.ParseDisconnect(body, v5, out var expiry);
        if (expiry is { } value)
        {
            if (session!.ExpiryInterval == 0 && value != 0)
            {
                // MQTT-3.14.2-2: a session that ends with the connection cannot be extended at its end.
                throw MqttProtocolException.Protocol("session expiry interval set on DISCONNECT after 0 on CONNECT");
            }

            disconnectExpiry = value;
        }

        // MQTT-3.14.4-3: a normal disconnect discards the will; MQTT 5 keeps it when asked (reason 0x04).
        if (reason != ReasonCode.DisconnectWithWill)
        {
            will = null;
        }

        status.CloseFor("client sent DISCONNECT");
    }

    private async Task CloseAsync()
    {
        if (!status.TryBeginTeardown())
        {
            return;
        }

        status.MarkClosing();
        MqttLog.Closed(Logger, status);
        // MQTT 5 Will Delay Interval: the will waits in the session, with the bus connections kept to publish it.
        var pending = buses is null ? null : will;
        var delayed = pending is { DelaySeconds: > 0 } && v5 && session is not null && !willWithoutDelay;
        try
        {
            if (pending is not null && !delayed)
            {
                PublishWillQuietly(pending);
            }

            subscriptions?.RemoveAll();
            if (Volatile.Read(ref outboundQos) is { } qos)
            {
                await qos.ReturnInflightAsync(Logger).ConfigureAwait(false);
            }
            inbound?.Close();
            if (buses is not null && !delayed)
            {
                await buses.CloseAsync(status.Reason).ConfigureAwait(false);
            }
        }
        finally
        {
            output.Complete();
            await packets.CompleteAsync().ConfigureAwait(false);
            if (session is not null)
            {
                var waiting = delayed ? new DelayedWill(Environment.TickCount64 + (pending!.DelaySeconds * 1000L), publish => ResolveWillAsync(pending, publish)) : null;
                if (!await accountState!.Sessions.DetachAsync(this, session, disconnectExpiry, waiting).ConfigureAwait(false) && delayed)
                {
                    // The session ends with the connection, or a takeover decided (TakeOver cleared the will to drop it).
                    await ResolveWillAsync(pending!, publish: will is not null).ConfigureAwait(false);
                }
            }
        }
    }

    /// <summary>Publishes (or drops) a delayed will, then closes the bus connections kept for it.</summary>
    private async Task ResolveWillAsync(WillMessage pending, bool publish)
    {
        if (publish)
        {
            PublishWillQuietly(pending);
        }

        await buses!.CloseAsync(status.Reason).ConfigureAwait(false);
    }

    private void PublishWillQuietly(WillMessage pending)
    {
        try
        {
            PublishWill(pending, buses!.Bus);
        }
        catch (BusRefusedException ex)
        {
            // The user may not publish to the will's topic: dropped, as any forbidden publish.
            MqttLog.DeliveryDropped(Logger, status.Name, pending.Topic, ex.Message);
        }
    }

    private async Task StoreWillAsync(Task<ulong> storing)
    {
        try
        {
            await storing.ConfigureAwait(false);
        }
        catch (Exception ex) when (ex is JetStreamApiException or ObjectDisposedException)
        {
            MqttLog.QosStoreFailed(Logger, status.Name, ex.Message);
        }
    }

    /// <summary>Publishes the will on an ungraceful close (MQTT-3.1.2-8), retained if it asks to be.</summary>
    private void PublishWill(WillMessage pending, IBusConnection bus)
    {
        var subjectBuffer = new byte[TopicMapper.MaxSubjectLength(pending.TopicBytes.Length)];
        if (TopicMapper.ToSubject(pending.TopicBytes, filter: false, subjectBuffer, out var written) != TopicStatus.Ok)
        {
            MqttLog.DeliveryDropped(Logger, status.Name, pending.Topic, "the will topic cannot be a NATS subject");
            return;
        }

        var subject = subjectBuffer.AsSpan(0, written);
        var reader = new PropertyReader(pending.Properties);
        var properties = MessageProperties.Read(ref reader, will: true);
        ReadOnlySequence<byte> headers;
        if (properties.HasHeaderProperties)
        {
            var block = new ArrayBufferWriter<byte>(128);
            MqttHeaders.Write(block, pending.Qos, pending.Retain, properties, properties.ResponseTopic, properties.CorrelationData);
            headers = new ReadOnlySequence<byte>(block.WrittenMemory);
        }
        else
        {
            headers = MqttHeaders.PubOnlyBlock(pending.Qos, pending.Retain);
        }

        // Kept under the subject the account's mappings sent it to, as nats-server maps a will when it parses CONNECT.
        var routed = bus.PublishMapped(subject, default, headers, new ReadOnlySequence<byte>(pending.Payload));
        var topic = pending.TopicBytes;
        if (!routed.SequenceEqual(subject))
        {
            subject = routed.ToArray();
            topic = new byte[TopicMapper.TopicLength(subject)];
            TopicMapper.ToTopic(subject, topic);
        }

        // Into the state of the client's account, as its publishes.
        if (pending.Qos > 0 && accountState?.Qos is { } qos)
        {
            _ = StoreWillAsync(qos.StoreAsync(subject, headers.First, pending.Payload));
        }

        if (pending.Retain)
        {
            accountState?.Retained.Set(subject, topic, pending.Qos, pending.Payload, pending.Properties);
        }
    }
}
