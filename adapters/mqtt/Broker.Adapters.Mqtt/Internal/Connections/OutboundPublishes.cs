using System.Buffers;
using System.Buffers.Text;
using Broker.Abstractions;
using Broker.Adapters.Mqtt.Internal.Codec;
using Broker.Adapters.Mqtt.Internal.Delivery;
using Broker.Adapters.Mqtt.Internal.Headers;
using Broker.Adapters.Mqtt.Internal.Topics;
using Microsoft.Extensions.Logging;

namespace Broker.Adapters.Mqtt.Internal.Connections;

/// <summary>
/// PUBLISH to the client: formatted straight into the output under the write lock, on the thread that drains the
/// connection's bus clients (docs/plugins.md, "message bus"). The topic is converted from the subject while it is
/// copied; a NATS message's headers never reach the payload (MQTT 5 clients get them as properties, and topic aliases
/// shorten repeated topics, within the limits the client set in its CONNECT). A QoS 1 or 2 delivery takes its packet
/// identifier from <see cref="OutboundQosFlow"/> in the step that writes it. Nothing is allocated per message.
/// </summary>
internal sealed class OutboundPublishes
{
    private readonly PacketOutput output;
    // The connection's QoS flow, made with the first QoS 1 or 2 delivery (or a dropped one to settle).
    private readonly IOutboundQosSource qos;

    // An MQTT 5 limit the client set for what the broker sends it (0: none); its maximum packet size is the output's.
    private readonly ushort clientTopicAliasMaximum;

    // The output's lock (PacketOutput.writeLock), read through it (a field of its own was 8 B, issue 25): guards
    // aliases, and the deliveries in flight the QoS flow holds.
    private object writeLock => output.WriteLock;

    // Outbound topic aliases (MQTT 5) by topic; guarded by writeLock.
    private OutboundAliases? aliases;

    public OutboundPublishes(PacketOutput output, IOutboundQosSource qos, ushort clientTopicAliasMaximum)
    {
        this.output = output;
        this.qos = qos;
        this.clientTopicAliasMaximum = clientTopicAliasMaximum;
    }

    // Read through the output, which was given it at CONNECT (a field of its own was 4 B).
    private uint clientMaximumPacketSize => output.ClientMaximumPacketSize;

    /// <summary>
    /// MQTT 3.1.1: fixed header, topic, packet identifier for QoS 1 and 2, payload. Headers are not read at all. False
    /// when a QoS 1 or 2 delivery must wait: the client has as many in flight as it accepts.
    /// </summary>
    public bool SendV3(ReadOnlySpan<byte> subject, in ReadOnlySequence<byte> payload, bool retain, in Inflight pending = default)
    {
        if (PublishEncoder.SizeV3(subject, payload.Length) < 0)
        {
            Drop(subject, pending, "larger than an MQTT packet can be");
            return true;
        }

        lock (writeLock)
        {
            if (output.IsCompleted)
            {
                return false;
            }

            ushort packetId = 0;
            var dup = false;
            if (pending.Qos > 0 && !qos.OutboundQos.TryAssign(pending, out packetId, out dup))
            {
                return false;
            }

            PublishEncoder.WriteV3(output.Writer, subject, payload, retain, pending.Qos, packetId, dup);
        }

        output.OnDelivered();
        return true;
    }

    /// <summary>
    /// MQTT 5: the NATS headers become properties, topic aliases shorten repeated topics. False when a QoS 1 or 2
    /// delivery must wait for the client's receive maximum. <paramref name="waitedSeconds"/>: how long a stored or
    /// retained message waited in the broker, taken off its message expiry interval (MQTT-3.3.2-6); the caller dropped
    /// it when that interval had passed.
    /// </summary>
    public bool SendV5(ActiveSubscription subscription, in BusMessage message, bool retainedDelivery, in Inflight pending = default, uint waitedSeconds = 0)
    {
        var headerBlock = Contiguous(message.Headers, out var rented);
        try
        {
            var view = new HeaderView(headerBlock);
            var subject = message.Subject;
            var retain = retainedDelivery || (subscription.Record.RetainAsPublished && view.Retained);
            var responseTopicLength = !view.ResponseTopic.IsEmpty ? view.ResponseTopic.Length
                : !message.ReplyTo.IsEmpty ? TopicMapper.TopicLength(message.ReplyTo) : 0;
            var correlationLength = view.CorrelationData.IsEmpty ? 0 : Base64.GetMaxDecodedFromUtf8Length(view.CorrelationData.Length);
            Span<byte> correlation = correlationLength <= 512 ? stackalloc byte[correlationLength] : new byte[correlationLength];
            if (correlationLength > 0)
            {
                correlation = Base64.DecodeFromUtf8(view.CorrelationData, correlation, out _, out var decoded) == OperationStatus.Done
                    ? correlation[..decoded]
                    : default;
            }

            var baseProperties = PropertiesSize(ref view, responseTopicLength, correlation.Length, subscription.Record.Identifier);
            var topicLength = TopicMapper.TopicLength(subject);
            var payloadLength = message.Payload.Length;
            var tooLarge = false;
            lock (writeLock)
            {
                if (output.IsCompleted)
                {
                    return false;
                }

                var alias = AliasFor(subject, out var aliasIsNew);
                var sentTopicLength = alias != 0 && !aliasIsNew ? 0 : topicLength;
                var propertiesLength = baseProperties + (alias != 0 ? 3 : 0);
                var remaining = 2L + sentTopicLength + (pending.Qos > 0 ? 2 : 0) + PacketWriter.VariableIntSize(propertiesLength) + propertiesLength + payloadLength;
                if (remaining > PacketFramer.MaxRemainingLength || (clientMaximumPacketSize != 0 && PacketWriter.PacketSize((int)remaining) > clientMaximumPacketSize))
                {
                    if (aliasIsNew)
                    {
                        aliases!.Forget(subject);
                    }

                    tooLarge = true;
                }
                else
                {
                    ushort packetId = 0;
                    var dup = false;
                    if (pending.Qos > 0 && !qos.OutboundQos.TryAssign(pending, out packetId, out dup))
                    {
                        if (aliasIsNew)
                        {
                            aliases!.Forget(subject);
                        }

                        return false;
                    }

                    Write(subject, message, ref view, correlation, subscription.Record.Identifier, pending.Qos, packetId, dup, retain, alias, sentTopicLength, (int)remaining, propertiesLength, waitedSeconds);
                }
            }

            if (tooLarge)
            {
                // MQTT-3.1.2-25: a packet larger than the client accepts is dropped for this client, as if it had been sent.
                Drop(subject, pending, "larger than the client's maximum packet size");
                return true;
            }

            output.OnDelivered();
            return true;
        }
        finally
        {
            if (rented is not null)
            {
                ArrayPool<byte>.Shared.Return(rented);
            }
        }
    }

    /// <summary>Writes one MQTT 5 PUBLISH into the output; under writeLock.</summary>
    private void Write(
        ReadOnlySpan<byte> subject,
        in BusMessage message,
        scoped ref HeaderView view,
        scoped ReadOnlySpan<byte> correlation,
        int identifier,
        byte qosLevel,
        ushort packetId,
        bool dup,
        bool retain,
        ushort alias,
        int sentTopicLength,
        int remaining,
        int propertiesLength,
        uint waitedSeconds)
    {
        var payloadLength = message.Payload.Length;
        var size = remaining + 5L;
        var inline = size <= PublishEncoder.SingleSpanLimit;
        var writer = output.Writer;
        var span = writer.GetSpan((int)(inline ? size : size - payloadLength));
        var packet = new PacketWriter(span);
        packet.WriteFixedHeader(PacketType.Publish, PublishEncoder.Flags(retain, qosLevel, dup), remaining);
        packet.WriteUInt16((ushort)sentTopicLength);
        if (sentTopicLength > 0)
        {
            packet.Advance(TopicMapper.ToTopic(subject, packet.Rest));
        }

        if (qosLevel > 0)
        {
            packet.WriteUInt16(packetId);
        }

        packet.WriteVariableInt(propertiesLength);
        WriteProperties(ref packet, ref view, message.ReplyTo, correlation, identifier, alias, waitedSeconds);
        if (inline)
        {
            message.Payload.CopyTo(packet.Rest);
            packet.Advance((int)payloadLength);
            writer.Advance(packet.Written);
        }
        else
        {
            writer.Advance(packet.Written);
            PublishEncoder.WriteSequence(writer, message.Payload);
        }
    }

    /// <summary>
    /// A message not sent to this client (too large for it, or expired): logged, and a QoS 1 or 2 one settled with its
    /// consumer as if the client had acknowledged it. Not under writeLock.
    /// </summary>
    public void Drop(ReadOnlySpan<byte> subject, in Inflight pending, string reason)
    {
        MqttLog.DeliveryDropped(output.Logger, output.Status.Name, System.Text.Encoding.UTF8.GetString(subject), reason);
        // Only a delivery with something to settle reaches the QoS flow: a QoS 0 one has no consumer, no ack subject.
        if (pending.AckSubject is not null || pending.Consumer is not null)
        {
            qos.OutboundQos.Discard(pending);
        }
    }

    private static int PropertiesSize(ref HeaderView view, int responseTopicLength, int correlationLength, int identifier)
    {
        var size = 0;
        if (view.PayloadFormat != 0)
        {
            size += 2;
        }

        if (view.HasMessageExpiry)
        {
            size += 5;
        }

        if (!view.ContentType.IsEmpty)
        {
            size += 3 + view.ContentType.Length;
        }

        if (responseTopicLength > 0)
        {
            size += 3 + responseTopicLength;
        }

        if (correlationLength > 0)
        {
            size += 3 + correlationLength;
        }

        if (identifier != 0)
        {
            size += 1 + PacketWriter.VariableIntSize(identifier);
        }

        if (view.UserPropertyCount > 0)
        {
            view.Rewind();
            while (view.NextUserProperty(out var name, out var value))
            {
                size += 5 + name.Length + value.Length;
            }
        }

        return size;
    }

    private static void WriteProperties(ref PacketWriter writer, scoped ref HeaderView view, scoped ReadOnlySpan<byte> replyTo, scoped ReadOnlySpan<byte> correlation, int identifier, ushort alias, uint waitedSeconds)
    {
        if (view.PayloadFormat != 0)
        {
            writer.WriteByte(PropertyId.PayloadFormatIndicator);
            writer.WriteByte(view.PayloadFormat);
        }

        if (view.HasMessageExpiry)
        {
            writer.WriteByte(PropertyId.MessageExpiryInterval);
            writer.WriteUInt32(view.MessageExpiry > waitedSeconds ? view.MessageExpiry - waitedSeconds : 1);
        }

        if (!view.ContentType.IsEmpty)
        {
            writer.WriteByte(PropertyId.ContentType);
            writer.WriteBinary(view.ContentType);
        }

        if (!view.ResponseTopic.IsEmpty)
        {
            writer.WriteByte(PropertyId.ResponseTopic);
            writer.WriteBinary(view.ResponseTopic);
        }
        else if (!replyTo.IsEmpty)
        {
            // A NATS request: its reply subject, as a topic, is where an MQTT 5 responder publishes the answer.
            writer.WriteByte(PropertyId.ResponseTopic);
            writer.WriteUInt16((ushort)TopicMapper.TopicLength(replyTo));
            writer.Advance(TopicMapper.ToTopic(replyTo, writer.Rest));
        }

        if (!correlation.IsEmpty)
        {
            writer.WriteByte(PropertyId.CorrelationData);
            writer.WriteBinary(correlation);
        }

        if (identifier != 0)
        {
            writer.WriteByte(PropertyId.SubscriptionIdentifier);
            writer.WriteVariableInt(identifier);
        }

        if (alias != 0)
        {
            writer.WriteByte(PropertyId.TopicAlias);
            writer.WriteUInt16(alias);
        }

        if (view.UserPropertyCount > 0)
        {
            view.Rewind();
            while (view.NextUserProperty(out var name, out var value))
            {
                writer.WriteByte(PropertyId.UserProperty);
                writer.WriteBinary(name);
                writer.WriteBinary(value);
            }
        }
    }

    /// <summary>The alias to send a subject's topic with (0: none); a new one carries the topic once more. Under writeLock.</summary>
    private ushort AliasFor(ReadOnlySpan<byte> subject, out bool isNew)
    {
        isNew = false;
        if (clientTopicAliasMaximum == 0)
        {
            return 0;
        }

        aliases ??= new OutboundAliases(clientTopicAliasMaximum);
        return aliases.Get(subject, out isNew);
    }

    /// <summary>A header block as one span: copied into <paramref name="rented"/> (to return to the pool) when it spans segments.</summary>
    internal static ReadOnlySpan<byte> Contiguous(in ReadOnlySequence<byte> sequence, out byte[]? rented)
    {
        rented = null;
        if (sequence.IsSingleSegment)
        {
            return sequence.FirstSpan;
        }

        rented = ArrayPool<byte>.Shared.Rent((int)sequence.Length);
        sequence.CopyTo(rented);
        return rented.AsSpan(0, (int)sequence.Length);
    }
}
