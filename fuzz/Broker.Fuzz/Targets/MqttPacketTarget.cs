using System.Buffers;
using Broker.Adapters.Mqtt.Internal.Codec;
using Broker.Adapters.Mqtt.Internal.Topics;
using Broker.Fuzz.Support;
using Broker.TestKit;

namespace Broker.Fuzz.Targets;

/// <summary>
/// The MQTT packet decoder (3.1.1 and 5) of adapters/mqtt, driven as the connection's read loop drives it: frame with
/// <see cref="PacketFramer"/>, a CONNECT first (its protocol level decides the version), then each packet decoded by
/// type. The only error allowed is <see cref="MqttProtocolException"/>, after which the connection is closed (nothing
/// more is decoded). Invariants: framing gives the same packets from a cut-up sequence as from one span; a packet
/// that decodes re-encodes to equivalent bytes (see <see cref="MqttReencoder"/>).
/// </summary>
internal sealed class MqttPacketTarget : IFuzzTarget
{
    // The adapter's default maximum packet size is larger; a small one lets short inputs reach the check.
    private const int MaxPacketSize = 4096;

    public string Name => "mqtt";

    public void Run(ReadOnlySpan<byte> input)
    {
        var bytes = input.ToArray();
        var frames = FrameAll(new ReadOnlySequence<byte>(bytes));
        foreach (var layout in Splits.Layouts(bytes, randomLayouts: 2))
        {
            var split = FrameAll(SegmentedSequence.Create(layout));
            InvariantViolation.Check(split.SequenceEqual(frames), "framing a cut-up input differs from framing it whole");
        }

        var connection = new ConnectionState();
        foreach (var frame in frames)
        {
            if (frame.Error is not null)
            {
                return;
            }

            try
            {
                Decode(connection, frame.Header, bytes.AsMemory(frame.BodyStart, frame.BodyLength));
            }
            catch (MqttProtocolException)
            {
                // The connection answers and closes: nothing after this packet is read.
                return;
            }

            if (connection.Closed)
            {
                return;
            }
        }
    }

    /// <summary>The packets a read loop takes off the input, up to the first framing error or the incomplete rest.</summary>
    private static List<Frame> FrameAll(ReadOnlySequence<byte> buffer)
    {
        var frames = new List<Frame>();
        long offset = 0;
        while (true)
        {
            var status = PacketFramer.TryReadHeader(buffer, out var header, out var remaining, out var headerLength);
            if (status == FrameStatus.Incomplete)
            {
                // Five bytes always decide: a header, or a fifth length byte (malformed).
                InvariantViolation.Check(buffer.Length < 5, "incomplete header with five bytes available");
                return frames;
            }

            if (status == FrameStatus.Malformed)
            {
                frames.Add(new Frame(header, 0, 0, "malformed remaining length"));
                return frames;
            }

            InvariantViolation.Check(remaining is >= 0 and <= PacketFramer.MaxRemainingLength && headerLength is >= 2 and <= 5, $"remaining length {remaining}, header {headerLength}");
            if ((long)remaining + headerLength > MaxPacketSize)
            {
                frames.Add(new Frame(header, 0, 0, "too large"));
                return frames;
            }

            if (buffer.Length < headerLength + remaining)
            {
                return frames;
            }

            frames.Add(new Frame(header, (int)offset + headerLength, remaining, null));
            offset += headerLength + remaining;
            buffer = buffer.Slice(headerLength + remaining);
        }
    }

    private static void Decode(ConnectionState connection, byte header, ReadOnlyMemory<byte> body)
    {
        var type = (PacketType)(header >> 4);
        var flags = (byte)(header & 0x0F);
        if (connection.Connect is null)
        {
            if (type != PacketType.Connect)
            {
                throw MqttProtocolException.Protocol("first packet not CONNECT");
            }

            var connect = new ConnectPacket();
            connect.Parse(body.Span);
            MqttReencoder.CheckConnect(connect, body.Span);
            connection.Connect = connect;
            return;
        }

        var v5 = connection.Connect.IsV5;
        var expectedFlags = type switch
        {
            PacketType.Publish => flags,
            PacketType.PubRel or PacketType.Subscribe or PacketType.Unsubscribe => (byte)0x02,
            _ => (byte)0,
        };
        if (flags != expectedFlags)
        {
            throw MqttProtocolException.Malformed("invalid fixed header flags");
        }

        switch (type)
        {
            case PacketType.Publish:
                var publish = PublishPacket.Parse(flags, body, v5);
                MqttReencoder.CheckPublish(publish, flags, body.Span, v5);
                break;
            case PacketType.PubAck or PacketType.PubRec or PacketType.PubRel or PacketType.PubComp:
                var packetId = AckPacket.Parse(body.Span, v5, out var reason);
                MqttReencoder.CheckAck(type, packetId, reason, body.Span, v5);
                break;
            case PacketType.Subscribe or PacketType.Unsubscribe:
                var unsubscribe = type == PacketType.Unsubscribe;
                var subscribe = SubscribePacket.Parse(body.Span, v5, unsubscribe);
                MqttReencoder.CheckSubscribe(subscribe, body.Span, v5, unsubscribe);
                foreach (var filter in subscribe.Filters)
                {
                    // The adapter maps each filter to a subject; a refusal is a status, never an exception.
                    TopicMapper.FilterToSubject(filter.Filter, out _);
                }

                break;
            case PacketType.Disconnect:
                AckPacket.ParseDisconnect(body.Span, v5, out _);
                connection.Closed = true;
                break;
            case PacketType.PingReq:
                break;
            default:
                throw MqttProtocolException.Protocol("unexpected packet type");
        }
    }

    private sealed record Frame(byte Header, int BodyStart, int BodyLength, string? Error);

    private sealed class ConnectionState
    {
        public ConnectPacket? Connect;

        public bool Closed;
    }
}
