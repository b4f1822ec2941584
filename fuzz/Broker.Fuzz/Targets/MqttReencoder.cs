using System.Buffers;
using System.Text;
using Broker.Adapters.Mqtt.Internal.Codec;
using Broker.Adapters.Mqtt.Internal.Topics;
using Broker.Fuzz.Support;

namespace Broker.Fuzz.Targets;

/// <summary>
/// Re-encodes decoded MQTT packets and compares. Where the adapter has an encoder (acknowledgements:
/// <see cref="ControlPackets.WriteAck"/>; a QoS 0 3.1.1 PUBLISH: <see cref="PublishEncoder.WriteV3"/> after mapping the
/// topic to a subject and back) its output is compared with the bytes received. Packets only clients send (CONNECT,
/// SUBSCRIBE, UNSUBSCRIBE) are written here in their canonical form: 3.1.1 must give back the received bytes exactly;
/// MQTT 5 (property order and user properties are free) must decode again to the same fields.
/// </summary>
internal static class MqttReencoder
{
    public static void CheckAck(PacketType type, ushort packetId, byte reason, ReadOnlySpan<byte> body, bool v5)
    {
        var output = new ArrayBufferWriter<byte>();
        ControlPackets.WriteAck(output, type, packetId, v5, reason);
        var written = output.WrittenSpan;
        InvariantViolation.Check(written[0] >> 4 == (int)type, "ack re-encoded with another type");
        var reencodedBody = written[2..];
        if (!v5)
        {
            InvariantViolation.Check(reencodedBody.SequenceEqual(body), $"3.1.1 {type} re-encodes to other bytes");
            return;
        }

        var again = AckPacket.Parse(reencodedBody, v5: true, out var reasonAgain);
        InvariantViolation.Check(again == packetId && reasonAgain == reason, $"MQTT 5 {type} re-encodes to id {again} reason {reasonAgain}, was {packetId} {reason}");
    }

    public static void CheckPublish(in PublishPacket packet, byte flags, ReadOnlySpan<byte> body, bool v5)
    {
        // The body is topic, packet id, properties, payload: each decoded field must sit where it was sent. (The
        // properties length is read as nats-server reads it, without requiring the shortest encoding, so it is not
        // rebuilt here.)
        var head = new List<byte>();
        AddBinary(head, packet.Topic);
        if (packet.Qos > 0)
        {
            head.Add((byte)(packet.PacketId >> 8));
            head.Add((byte)packet.PacketId);
        }

        var payloadStart = body.Length - packet.Payload.Length;
        InvariantViolation.Check(body.StartsWith(head.ToArray()), "PUBLISH topic or packet id decoded wrongly");
        InvariantViolation.Check(packet.Payload.Span.SequenceEqual(body[payloadStart..]), "PUBLISH payload is not the end of its body");
        if (v5)
        {
            var blockStart = payloadStart - packet.Properties.Block.Length;
            InvariantViolation.Check(blockStart > head.Count && packet.Properties.Block.SequenceEqual(body[blockStart..payloadStart]), "PUBLISH properties are not just before the payload");
        }
        else
        {
            InvariantViolation.Check(payloadStart == head.Count, "3.1.1 PUBLISH payload does not follow the variable header");
        }

        var encodedFlags = (byte)((packet.Duplicate ? 0x08 : 0) | (packet.Qos << 1) | (packet.Retain ? 1 : 0));
        InvariantViolation.Check(encodedFlags == flags, "PUBLISH flags decoded wrongly");

        if (v5 || packet.Qos != 0 || packet.Topic.IsEmpty)
        {
            return;
        }

        // The delivery path: topic to subject, subject back to topic inside the encoder.
        var subject = new byte[TopicMapper.MaxSubjectLength(packet.Topic.Length)];
        if (TopicMapper.ToSubject(packet.Topic, filter: false, subject, out var length) != TopicStatus.Ok)
        {
            return;
        }

        var output = new ArrayBufferWriter<byte>();
        PublishEncoder.WriteV3(output, subject.AsSpan(0, length), new ReadOnlySequence<byte>(packet.Payload), packet.Retain);
        var written = output.WrittenSpan;
        InvariantViolation.Check(written[0] == (((int)PacketType.Publish << 4) | flags), "PUBLISH re-encoded with other flags");
        var headerLength = 1 + PacketWriter.VariableIntSize(body.Length);
        InvariantViolation.Check(
            written[headerLength..].SequenceEqual(body),
            $"QoS 0 PUBLISH to '{Encoding.UTF8.GetString(packet.Topic)}' (subject '{Encoding.UTF8.GetString(subject.AsSpan(0, length))}') re-encodes to other bytes");
    }

    public static void CheckSubscribe(SubscribePacket packet, ReadOnlySpan<byte> body, bool v5, bool unsubscribe)
    {
        var canonical = new List<byte>();
        canonical.Add((byte)(packet.PacketId >> 8));
        canonical.Add((byte)packet.PacketId);
        if (v5)
        {
            var properties = new List<byte>();
            if (packet.SubscriptionIdentifier != 0)
            {
                properties.Add(PropertyId.SubscriptionIdentifier);
                AddVariableInt(properties, packet.SubscriptionIdentifier);
            }

            AddVariableInt(canonical, properties.Count);
            canonical.AddRange(properties);
        }

        foreach (var filter in packet.Filters)
        {
            AddBinary(canonical, Encoding.UTF8.GetBytes(filter.Filter));
            if (!unsubscribe)
            {
                canonical.Add((byte)(filter.Qos | (filter.NoLocal ? 0x04 : 0) | (filter.RetainAsPublished ? 0x08 : 0) | (filter.RetainHandling << 4)));
            }
        }

        var bytes = canonical.ToArray();
        if (!v5)
        {
            InvariantViolation.Check(bytes.AsSpan().SequenceEqual(body), "3.1.1 (UN)SUBSCRIBE re-encodes to other bytes");
            return;
        }

        var again = SubscribePacket.Parse(bytes, v5, unsubscribe);
        InvariantViolation.Check(
            again.PacketId == packet.PacketId && again.SubscriptionIdentifier == packet.SubscriptionIdentifier && again.Filters.SequenceEqual(packet.Filters),
            "MQTT 5 (UN)SUBSCRIBE re-encodes to other fields");
    }

    public static void CheckConnect(ConnectPacket packet, ReadOnlySpan<byte> body)
    {
        var bytes = EncodeConnect(packet);
        if (!packet.IsV5)
        {
            InvariantViolation.Check(bytes.AsSpan().SequenceEqual(body), "3.1.1 CONNECT re-encodes to other bytes");
            return;
        }

        var again = new ConnectPacket();
        again.Parse(bytes);
        InvariantViolation.Check(Describe(again) == Describe(packet), $"MQTT 5 CONNECT re-encodes to other fields:\n {Describe(packet)}\n {Describe(again)}");
    }

    private static byte[] EncodeConnect(ConnectPacket packet)
    {
        var bytes = new List<byte>();
        AddBinary(bytes, "MQTT"u8);
        bytes.Add(packet.Level);
        var will = packet.Will;
        var flags = (packet.CleanStart ? 0x02 : 0) | (will is null ? 0 : 0x04 | (will.Qos << 3) | (will.Retain ? 0x20 : 0))
            | (packet.Password is null ? 0 : 0x40) | (packet.UserName is null ? 0 : 0x80);
        bytes.Add((byte)flags);
        bytes.Add((byte)(packet.KeepAlive >> 8));
        bytes.Add((byte)packet.KeepAlive);
        if (packet.IsV5)
        {
            var properties = new List<byte>();
            if (packet.SessionExpiryInterval != 0)
            {
                properties.Add(PropertyId.SessionExpiryInterval);
                AddUInt32(properties, packet.SessionExpiryInterval);
            }

            if (packet.ReceiveMaximum != ushort.MaxValue)
            {
                properties.Add(PropertyId.ReceiveMaximum);
                properties.Add((byte)(packet.ReceiveMaximum >> 8));
                properties.Add((byte)packet.ReceiveMaximum);
            }

            if (packet.MaximumPacketSize != 0)
            {
                properties.Add(PropertyId.MaximumPacketSize);
                AddUInt32(properties, packet.MaximumPacketSize);
            }

            if (packet.TopicAliasMaximum != 0)
            {
                properties.Add(PropertyId.TopicAliasMaximum);
                properties.Add((byte)(packet.TopicAliasMaximum >> 8));
                properties.Add((byte)packet.TopicAliasMaximum);
            }

            if (packet.RequestResponseInformation)
            {
                properties.Add(PropertyId.RequestResponseInformation);
                properties.Add(1);
            }

            if (!packet.RequestProblemInformation)
            {
                properties.Add(PropertyId.RequestProblemInformation);
                properties.Add(0);
            }

            if (packet.AuthenticationMethod is { } method)
            {
                properties.Add(PropertyId.AuthenticationMethod);
                AddBinary(properties, Encoding.UTF8.GetBytes(method));
            }

            AddVariableInt(bytes, properties.Count);
            bytes.AddRange(properties);
        }

        AddBinary(bytes, Encoding.UTF8.GetBytes(packet.ClientId));
        if (will is not null)
        {
            if (packet.IsV5)
            {
                AddVariableInt(bytes, will.Properties.Length);
                bytes.AddRange(will.Properties);
            }

            AddBinary(bytes, will.TopicBytes);
            AddBinary(bytes, will.Payload);
        }

        if (packet.UserName is { } user)
        {
            AddBinary(bytes, Encoding.UTF8.GetBytes(user));
        }

        if (packet.Password is { } password)
        {
            AddBinary(bytes, password);
        }

        return [.. bytes];
    }

    private static string Describe(ConnectPacket p)
        => $"level {p.Level} clean {p.CleanStart} keepalive {p.KeepAlive} id '{p.ClientId}' user '{p.UserName}' password {(p.Password is null ? "-" : Convert.ToHexString(p.Password))} "
        + $"will {(p.Will is null ? "-" : $"{p.Will.Topic}/{Convert.ToHexString(p.Will.Payload)}/{p.Will.Qos}/{p.Will.Retain}/{p.Will.DelaySeconds}/{Convert.ToHexString(p.Will.Properties)}")} "
        + $"expiry {p.SessionExpiryInterval} receive {p.ReceiveMaximum} maxpacket {p.MaximumPacketSize} alias {p.TopicAliasMaximum} "
        + $"rri {p.RequestResponseInformation} rpi {p.RequestProblemInformation} auth '{p.AuthenticationMethod}'";

    private static void AddBinary(List<byte> bytes, ReadOnlySpan<byte> value)
    {
        bytes.Add((byte)(value.Length >> 8));
        bytes.Add((byte)value.Length);
        bytes.AddRange(value);
    }

    private static void AddUInt32(List<byte> bytes, uint value)
    {
        bytes.Add((byte)(value >> 24));
        bytes.Add((byte)(value >> 16));
        bytes.Add((byte)(value >> 8));
        bytes.Add((byte)value);
    }

    private static void AddVariableInt(List<byte> bytes, int value)
    {
        do
        {
            var b = (byte)(value & 0x7F);
            value >>= 7;
            bytes.Add(value > 0 ? (byte)(b | 0x80) : b);
        }
        while (value > 0);
    }
}
