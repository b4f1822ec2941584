using Broker.Abstractions;
using System.Buffers;
using Broker.Adapters.Mqtt.Internal.Codec;
using Broker.Adapters.Mqtt.Internal.Headers;
using Broker.Adapters.Mqtt.Internal.Topics;

namespace Broker.Adapters.Mqtt.Internal.Connections;

/// <summary>PUBLISH and PUBREL from the client: topic aliases, the subject, NATS headers, QoS acknowledgements.</summary>
internal sealed partial class MqttConnection
{
    // Topics the client set for its aliases (MQTT 5), indexed by alias; read loop only.
    private byte[]?[]? inboundAliases;

    // The subject of the current publish when the topic needs converting, and the header block of an MQTT 5 publish.
    private byte[] subjectBuffer = new byte[256];
    private readonly ArrayBufferWriter<byte> headerBuffer = new(256);

    private void HandlePublish(byte flags, ReadOnlyMemory<byte> body)
    {
        var packet = PublishPacket.Parse(flags, body, v5);
        if (packet.Qos == 2 && options.RejectQos2Publish)
        {
            throw new MqttProtocolException(ReasonCode.QosNotSupported, "QoS=2 is disabled for PUBLISH messages");
        }

        var topic = ResolveTopic(ref packet);
        var status = ToSubject(topic, out var subject);
        if (status != TopicStatus.Ok)
        {
            RefusePublish(ref packet, topic, status);
            return;
        }

        if (packet.Qos == 2)
        {
            if (!session!.TryAwaitRelease(packet.PacketId, packet.Duplicate))
            {
                // A resent QoS 2 PUBLISH whose PUBREL has not come: delivered already (method B), acknowledge again.
                AcknowledgePublish(PacketType.PubRec, packet.PacketId, ReasonCode.Success);
                return;
            }

            if (v5 && session.AwaitingReleaseCount > options.ReceiveMaximum)
            {
                throw new MqttProtocolException(ReasonCode.ReceiveMaximumExceeded, "receive maximum exceeded");
            }
        }

        ReadOnlyMemory<byte> headers;
        try
        {
            headers = Publish(subject, ref packet);
        }
        catch (BusRefusedException ex)
        {
            RefuseForbiddenPublish(ref packet, topic, ex.Message);
            return;
        }

        if (packet.Retain)
        {
            handler.Retained.Set(subject, topic, packet.Qos, packet.Payload.Span, v5 ? packet.Properties.Block : default);
        }

        if (packet.Qos == 0)
        {
            return;
        }

        // QoS 1 and 2 subscriptions get the message from JetStream; the publisher's acknowledgement waits until it is stored.
        Task? stored = null;
        if (handler.Qos is { } qos)
        {
            stored = qos.StoreAsync(subject, v5 ? MqttHeaders.WithOrigin(headers.Span, session!.ClientId) : headers, packet.Payload);
        }

        if (packet.Qos == 2 && session!.Persistent)
        {
            // Recorded after the delivery, not before: a restart in between loses no message (the resend is delivered again).
            stored = Both(stored, handler.Sessions.Store.AwaitReleaseAsync(session.ClientId, packet.PacketId));
        }

        AcknowledgePublish(packet.Qos == 1 ? PacketType.PubAck : PacketType.PubRec, packet.PacketId, ReasonCode.Success, stored);
    }

    /// <summary>Publishes to NATS subscribers; returns the header block it carried.</summary>
    private ReadOnlyMemory<byte> Publish(scoped ReadOnlySpan<byte> subject, scoped ref PublishPacket packet)
    {
        ReadOnlySequence<byte> headers;
        ReadOnlySpan<byte> reply = default;
        if (v5 && packet.Properties.HasHeaderProperties)
        {
            headerBuffer.Clear();
            var correlation = packet.Properties.CorrelationData;
            var responseTopic = packet.Properties.ResponseTopic;
            if (!responseTopic.IsEmpty)
            {
                reply = ReplySubject(responseTopic, correlation);
            }

            MqttHeaders.Write(headerBuffer, packet.Qos, packet.Retain, packet.Properties, correlation.IsEmpty ? default : responseTopic, correlation);
            headers = new ReadOnlySequence<byte>(headerBuffer.WrittenMemory);
        }
        else
        {
            headers = MqttHeaders.PubOnlyBlock(packet.Qos, packet.Retain);
        }

        (ownPublishes ?? bus)!.Publish(subject, reply, headers, new ReadOnlySequence<byte>(packet.Payload));
        return headers.First;
    }

    /// <summary>The topic of a publish: as sent, or the one its MQTT 5 topic alias stands for (setting the alias when both are given).</summary>
    private ReadOnlySpan<byte> ResolveTopic(ref PublishPacket packet)
    {
        var alias = packet.Properties.TopicAlias;
        if (alias == 0)
        {
            if (packet.Topic.IsEmpty)
            {
                throw new MqttProtocolException(ReasonCode.ProtocolError, "topic cannot be empty");
            }

            return packet.Topic;
        }

        if (alias > options.TopicAliasMaximum)
        {
            throw new MqttProtocolException(ReasonCode.TopicAliasInvalid, $"topic alias {alias} exceeds the maximum of {options.TopicAliasMaximum}");
        }

        inboundAliases ??= new byte[]?[options.TopicAliasMaximum + 1];
        if (packet.Topic.IsEmpty)
        {
            return inboundAliases[alias] ?? throw new MqttProtocolException(ReasonCode.ProtocolError, $"topic alias {alias} is not set");
        }

        if (inboundAliases[alias] is not { } known || !known.AsSpan().SequenceEqual(packet.Topic))
        {
            inboundAliases[alias] = packet.Topic.ToArray();
        }

        return packet.Topic;
    }

    /// <summary>Maps the topic to its subject; no copy when the topic is already a subject (<c>sensors</c>).</summary>
    private TopicStatus ToSubject(ReadOnlySpan<byte> topic, out ReadOnlySpan<byte> subject)
    {
        if (TopicMapper.IsIdentity(topic))
        {
            subject = topic;
            return topic.Length == 1 && topic[0] is (byte)'*' or (byte)'>' ? TopicStatus.NatsWildcardInTopicName : TopicStatus.Ok;
        }

        var needed = TopicMapper.MaxSubjectLength(topic.Length);
        if (subjectBuffer.Length < needed)
        {
            subjectBuffer = new byte[Math.Max(needed, subjectBuffer.Length * 2)];
        }

        var status = TopicMapper.ToSubject(topic, filter: false, subjectBuffer, out var written);
        subject = subjectBuffer.AsSpan(0, written);
        return status;
    }

    /// <summary>
    /// A topic the broker cannot publish: wildcards are a protocol violation (MQTT-3.3.2-2) and close the connection;
    /// characters NATS subjects cannot carry are refused the way nats-server refuses them (3.1.1: the connection is
    /// closed), while MQTT 5 clients get "topic name invalid" on the acknowledgement, or nothing for QoS 0.
    /// </summary>
    private void RefusePublish(scoped ref PublishPacket packet, scoped ReadOnlySpan<byte> topic, TopicStatus status)
    {
        var text = System.Text.Encoding.UTF8.GetString(topic);
        if (status == TopicStatus.WildcardInTopicName || !v5)
        {
            throw new MqttProtocolException(
                ReasonCode.TopicNameInvalid,
                status == TopicStatus.WildcardInTopicName ? $"wildcards not allowed in publish's topic: \"{text}\"" : $"character not supported for MQTT topics: \"{text}\"");
        }

        MqttLog.DeliveryDropped(logger, name, text, "the topic cannot be a NATS subject");
        if (packet.Qos == 1)
        {
            AcknowledgePublish(PacketType.PubAck, packet.PacketId, ReasonCode.TopicNameInvalid);
        }
        else if (packet.Qos == 2)
        {
            AcknowledgePublish(PacketType.PubRec, packet.PacketId, ReasonCode.TopicNameInvalid);
        }
    }

    /// <summary>
    /// A publish the user's permissions forbid: dropped and logged. MQTT 5 acknowledges QoS 1 and 2 with "not
    /// authorized"; 3.1.1 has no negative acknowledgement, so the publish is acknowledged as nats-server does and
    /// nothing is delivered.
    /// </summary>
    private void RefuseForbiddenPublish(scoped ref PublishPacket packet, scoped ReadOnlySpan<byte> topic, string reason)
    {
        MqttLog.DeliveryDropped(logger, name, System.Text.Encoding.UTF8.GetString(topic), reason);
        var ack = v5 ? ReasonCode.NotAuthorized : ReasonCode.Success;
        if (packet.Qos == 1)
        {
            AcknowledgePublish(PacketType.PubAck, packet.PacketId, ack);
        }
        else if (packet.Qos == 2)
        {
            if (v5)
            {
                // An error reason ends the exchange: no PUBREL follows.
                session!.Release(packet.PacketId);
            }

            AcknowledgePublish(PacketType.PubRec, packet.PacketId, ack);
        }
    }

    private void HandlePubRel(ReadOnlySpan<byte> body)
    {
        var packetId = AckPacket.Parse(body, v5, out _);
        var known = session!.Release(packetId);
        if (known && session.Persistent)
        {
            // PUBCOMP frees the identifier for reuse, so it waits until the record is gone: one left over would make
            // the next publish with the identifier look like a resend after a restart, and it would be dropped.
            AcknowledgePublish(PacketType.PubComp, packetId, ReasonCode.Success, handler.Sessions.Store.ReleaseAsync(session.ClientId, packetId));
            return;
        }

        WriteAck(PacketType.PubComp, packetId, known ? ReasonCode.Success : ReasonCode.PacketIdentifierNotFound);
    }

    /// <summary>Both tasks, without allocating when one of them is absent or done.</summary>
    private static Task? Both(Task? first, Task second)
        => first is null || first.IsCompletedSuccessfully ? second
            : second.IsCompletedSuccessfully ? first
            : Task.WhenAll(first, second);

    private void WriteAck(PacketType type, ushort packetId, byte reason)
    {
        lock (writeLock)
        {
            if (!outputCompleted)
            {
                ControlPackets.WriteAck(output, type, packetId, v5, reason);
            }
        }
    }
}
