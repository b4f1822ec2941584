using System.Buffers;
using Broker.Abstractions;
using Broker.Adapters.Mqtt.Internal.Codec;
using Broker.Adapters.Mqtt.Internal.Delivery;
using Broker.Adapters.Mqtt.Internal.Headers;
using Broker.Adapters.Mqtt.Internal.Sessions;
using Broker.Adapters.Mqtt.Internal.Topics;
using Microsoft.Extensions.Logging;

namespace Broker.Adapters.Mqtt.Internal.Connections;

/// <summary>
/// PUBLISH from the client: MQTT 5 topic aliases, the topic as a subject, the NATS header block of an MQTT 5 publish,
/// response topics as reply subjects (<see cref="RequestRelay"/> when there is correlation data), permissions, the
/// retained message; QoS 1 and 2 publishes are also stored for QoS 1 and 2 subscriptions and acknowledged through
/// <see cref="InboundQosFlow"/>. Read loop only; nothing is allocated per message when the topic is a subject.
/// </summary>
internal sealed class InboundPublishes
{
    private readonly MqttOptions options;
    private readonly IQosSource qosSource;
    private readonly RetainedMessages retained;
    private readonly BusConnections buses;
    private readonly MqttSession session;
    private readonly InboundQosFlow qosFlow;
    private readonly ConnectionStatus connection;
    private readonly ILogger logger;
    private readonly bool v5;

    // Topics the client set for its aliases (MQTT 5), indexed by alias.
    private byte[]?[]? inboundAliases;

    // The subject of the current publish when the topic needs converting, and the header block of an MQTT 5 publish:
    // empty until the first publish that needs them (issue 25: a subscriber that never publishes holds none).
    private byte[] subjectBuffer = [];
    private readonly ArrayBufferWriter<byte> headerBuffer = new();

    // The subject of a response topic, and the relay of requests with correlation data (made on first use).
    private byte[] replyBuffer = [];
    private RequestRelay? relay;

    public InboundPublishes(
        MqttOptions options,
        IQosSource qosSource,
        RetainedMessages retained,
        BusConnections buses,
        MqttSession session,
        InboundQosFlow qosFlow,
        ConnectionStatus connection,
        ILogger logger,
        bool v5)
    {
        this.options = options;
        this.qosSource = qosSource;
        this.retained = retained;
        this.buses = buses;
        this.session = session;
        this.qosFlow = qosFlow;
        this.connection = connection;
        this.logger = logger;
        this.v5 = v5;
    }

    /// <summary>Ends the relay of MQTT 5 requests (the connection is closing).</summary>
    public void Close() => relay?.Dispose();

    /// <summary>PUBLISH from the client: to NATS subscribers, retained when asked, stored for QoS 1 and 2 subscriptions.</summary>
    public void Handle(byte flags, ReadOnlyMemory<byte> body)
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
            if (!qosFlow.TryBegin(packet.PacketId, packet.Duplicate))
            {
                return;
            }

            if (qosFlow.HoldsQos2)
            {
                // Delivered at PUBREL (method A): held in the session store until then.
                qosFlow.Hold(HeldPublish.Create(packet.PacketId, v5, flags, body.Span, topic, packet.Topic.IsEmpty));
                return;
            }
        }

        if (Deliver(ref packet, topic, subject, held: null, out var stored) && packet.Qos > 0)
        {
            qosFlow.Published(packet.Qos, packet.PacketId, stored);
        }
    }

    /// <summary>PUBREL from the client: a held QoS 2 publish is delivered now; PUBCOMP follows (<see cref="InboundQosFlow"/>).</summary>
    public void Release(ReadOnlySpan<byte> body)
    {
        var packetId = AckPacket.Parse(body, v5, out _);
        if (!session.TryTakeHeld(packetId, out var held))
        {
            qosFlow.Release(packetId);
            return;
        }

        Task? stored = null;
        if (held.HasMessage)
        {
            var packet = PublishPacket.Parse(held.Flags, held.Body, held.V5);
            var topic = packet.Topic;

            // The topic was checked when the publish came.
            if (ToSubject(topic, out var subject) == TopicStatus.Ok)
            {
                Deliver(ref packet, topic, subject, held, out stored);
            }
        }

        qosFlow.Released(held, stored);
    }

    /// <summary>
    /// Delivers a publish: to NATS subscribers, retained when asked, stored for QoS 1 and 2 subscriptions
    /// (<paramref name="stored"/>, JetStream storing it). False when the user's permissions forbid it: refused (a
    /// publish) or dropped (a held publish at its PUBREL, as nats-server drops it).
    /// </summary>
    private bool Deliver(scoped ref PublishPacket packet, scoped ReadOnlySpan<byte> topic, scoped ReadOnlySpan<byte> subject, HeldPublish? held, out Task? stored)
    {
        stored = null;
        var headers = Headers(ref packet, out var reply);
        scoped ReadOnlySpan<byte> routed;
        try
        {
            // To NATS subscribers. The account's mappings may route it elsewhere: what is kept (retained, stored for QoS
            // 1 and 2) is kept under the subject it went to, as nats-server maps an MQTT publish when it parses it.
            routed = buses.Publisher.PublishMapped(subject, reply, headers, new ReadOnlySequence<byte>(packet.Payload));
        }
        catch (BusRefusedException ex)
        {
            if (held is null)
            {
                RefuseForbiddenPublish(ref packet, topic, ex.Message);
            }
            else
            {
                MqttLog.DeliveryDropped(logger, connection.Name, System.Text.Encoding.UTF8.GetString(topic), ex.Message);
            }

            return false;
        }

        if (packet.Retain)
        {
            retained.Set(routed, routed.SequenceEqual(subject) ? topic : MappedTopic(routed), packet.Qos, packet.Payload.Span, v5 ? packet.Properties.Block : default);
        }

        // QoS 1 and 2 subscriptions get the message from JetStream; the publisher's acknowledgement waits until it is stored.
        if (packet.Qos > 0 && qosSource.Qos is { } qos)
        {
            var block = v5 ? MqttHeaders.WithOrigin(headers.FirstSpan, session.ClientId) : headers.First;
            if (held?.MessageId is { } id)
            {
                block = MqttHeaders.With(block.Span, MqttHeaders.MessageId, System.Text.Encoding.ASCII.GetBytes(id));
            }

            stored = qos.StoreAsync(routed, block, packet.Payload);
        }

        return true;
    }

    /// <summary>The header block a publish carries, and its reply subject (MQTT 5 response topic).</summary>
    private ReadOnlySequence<byte> Headers(scoped ref PublishPacket packet, out ReadOnlySpan<byte> reply)
    {
        ReadOnlySequence<byte> headers;
        reply = default;
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

        return headers;
    }

    /// <summary>The MQTT topic of a subject the account's mappings gave (nats-server's <c>natsSubjectToMQTTTopic</c>); rare, so allocated.</summary>
    private static byte[] MappedTopic(ReadOnlySpan<byte> subject)
    {
        var topic = new byte[TopicMapper.TopicLength(subject)];
        TopicMapper.ToTopic(subject, topic);
        return topic;
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
            subjectBuffer = new byte[Math.Max(needed, Math.Max(subjectBuffer.Length * 2, 256))];
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

        MqttLog.DeliveryDropped(logger, connection.Name, text, "the topic cannot be a NATS subject");
        qosFlow.Refused(packet.Qos, packet.PacketId, ReasonCode.TopicNameInvalid, endExchange: false, $"character not supported for MQTT topics: \"{text}\"");
    }

    /// <summary>
    /// A publish the user's permissions forbid: dropped and logged. MQTT 5 acknowledges QoS 1 and 2 with "not
    /// authorized"; 3.1.1 has no negative acknowledgement, so the publish is acknowledged as nats-server does and
    /// nothing is delivered.
    /// </summary>
    private void RefuseForbiddenPublish(scoped ref PublishPacket packet, scoped ReadOnlySpan<byte> topic, string reason)
    {
        MqttLog.DeliveryDropped(logger, connection.Name, System.Text.Encoding.UTF8.GetString(topic), reason);

        // MQTT 5: an error reason ends a QoS 2 exchange, no PUBREL follows.
        qosFlow.Refused(packet.Qos, packet.PacketId, v5 ? ReasonCode.NotAuthorized : ReasonCode.Success, endExchange: v5, v5 ? reason : null);
    }

    /// <summary>
    /// The reply subject of a request: the response topic's subject, or with correlation data a relay subject of this
    /// connection (see <see cref="RequestRelay"/>). Empty when the response topic cannot be a subject.
    /// </summary>
    private ReadOnlySpan<byte> ReplySubject(ReadOnlySpan<byte> responseTopic, ReadOnlySpan<byte> correlation)
    {
        var needed = TopicMapper.MaxSubjectLength(responseTopic.Length);
        if (replyBuffer.Length < needed)
        {
            replyBuffer = new byte[Math.Max(needed, 128)];
        }

        if (TopicMapper.ToSubject(responseTopic, filter: false, replyBuffer, out var written) != TopicStatus.Ok)
        {
            return default;
        }

        var subject = replyBuffer.AsSpan(0, written);
        if (correlation.IsEmpty)
        {
            return subject;
        }

        relay ??= new RequestRelay(buses.Bus);
        return relay.Register(subject, correlation);
    }
}
