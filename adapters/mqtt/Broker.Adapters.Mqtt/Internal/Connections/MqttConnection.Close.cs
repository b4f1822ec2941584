using Broker.Abstractions;
using System.Buffers;
using Broker.Adapters.Mqtt.Internal.Codec;
using Broker.Adapters.Mqtt.Internal.Delivery;
using Broker.Adapters.Mqtt.Internal.JetStream;
using Broker.Adapters.Mqtt.Internal.Headers;
using Broker.Adapters.Mqtt.Internal.Topics;

namespace Broker.Adapters.Mqtt.Internal.Connections;

/// <summary>Ending a connection: DISCONNECT both ways, protocol violations, keep alive, takeover, the will.</summary>
internal sealed partial class MqttConnection
{
    private volatile bool closing;
    private string? closeReason;
    private uint? disconnectExpiry;
    private int closed;

    /// <summary>Called by the handler's timer: CONNECT timeout, then the keep alive (1.5 times the interval, MQTT-3.1.2-24).</summary>
    public void CheckTimers(long now)
    {
        if (closing)
        {
            return;
        }

        if (session is null)
        {
            // Counted from when the session state was loaded at the earliest: a CONNECT waits for it (SessionManager.Ready).
            if (now - Math.Max(startedAt, handler.Sessions.ReadyAt) > (long)options.ConnectTimeout.TotalMilliseconds)
            {
                MqttLog.ConnectTimeout(logger, name, options.ConnectTimeout);
                RequestClose("authentication timeout", null);
            }

            return;
        }

        if (keepAliveSeconds > 0 && now - Volatile.Read(ref lastInputAt) > keepAliveSeconds * 1500L)
        {
            MqttLog.KeepAliveExpired(logger, name, keepAliveSeconds);
            RequestClose("keep alive timeout", ReasonCode.KeepAliveTimeout);
        }
    }

    /// <summary>Another connection took the session over (MQTT-3.1.4-3): closed without its will, as nats-server does.</summary>
    public void TakeOver()
    {
        will = null;
        RequestClose("session taken over", ReasonCode.SessionTakenOver);
    }

    /// <summary>Closes from outside the read loop: the loop sees its read cancelled and tears down.</summary>
    private void RequestClose(string reason, byte? disconnectReason)
    {
        closeReason ??= reason;
        if (disconnectReason is { } code)
        {
            SendDisconnect(code, reason);
        }

        closing = true;
        input.CancelPendingRead();
    }

    private void OnViolation(MqttProtocolException ex)
    {
        closeReason ??= ex.Message;
        MqttLog.ProtocolViolation(logger, name, ex.Message);

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

        lock (writeLock)
        {
            if (!outputCompleted)
            {
                ControlPackets.WriteDisconnect(output, reason, requestProblemInformation ? text : null, clientMaximumPacketSize);
            }
        }
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

        closeReason = "client sent DISCONNECT";
        closing = true;
    }

    private async Task CloseAsync()
    {
        if (Interlocked.Exchange(ref closed, 1) != 0)
        {
            return;
        }

        closing = true;
        MqttLog.Closed(logger, name, closeReason ?? "closed");
        try
        {
            if (will is { } pending && bus is not null)
            {
                try
                {
                    PublishWill(pending);
                }
                catch (BusRefusedException ex)
                {
                    // The user may not publish to the will's topic: dropped, as any forbidden publish.
                    MqttLog.DeliveryDropped(logger, name, pending.Topic, ex.Message);
                }
            }

            RemoveAllSubscriptions();
            ReturnInflight();
            relay?.Dispose();
            if (bus is not null)
            {
                if (closeReason == SlowConsumerReason)
                {
                    // Said to the bus in nats-server's words, so /varz counts it and /connz shows it as for NATS.
                    bus.Close(SlowConsumerReason);
                }

                await bus.DisposeAsync().ConfigureAwait(false);
            }

            if (ownPublishes is not null)
            {
                await ownPublishes.DisposeAsync().ConfigureAwait(false);
            }
        }
        finally
        {
            CompleteOutput();
            await input.CompleteAsync().ConfigureAwait(false);
            if (scratch is not null)
            {
                System.Buffers.ArrayPool<byte>.Shared.Return(scratch);
                scratch = null;
            }

            if (session is not null)
            {
                await handler.Sessions.DetachAsync(this, session, disconnectExpiry).ConfigureAwait(false);
            }
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
            MqttLog.QosStoreFailed(logger, name, ex.Message);
        }
    }

    /// <summary>Publishes the will on an ungraceful close (MQTT-3.1.2-8), retained if it asks to be.</summary>
    private void PublishWill(WillMessage pending)
    {
        var subjectBuffer = new byte[TopicMapper.MaxSubjectLength(pending.TopicBytes.Length)];
        if (TopicMapper.ToSubject(pending.TopicBytes, filter: false, subjectBuffer, out var written) != TopicStatus.Ok)
        {
            MqttLog.DeliveryDropped(logger, name, pending.Topic, "the will topic cannot be a NATS subject");
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

        bus!.Publish(subject, default, headers, new ReadOnlySequence<byte>(pending.Payload));
        if (pending.Qos > 0 && handler.Qos is { } qos)
        {
            _ = StoreWillAsync(qos.StoreAsync(subject, headers.First, pending.Payload));
        }

        if (pending.Retain)
        {
            handler.Retained.Set(subject, pending.TopicBytes, pending.Qos, pending.Payload, pending.Properties);
        }
    }
}
