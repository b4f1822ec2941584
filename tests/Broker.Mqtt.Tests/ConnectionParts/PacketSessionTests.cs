using Broker.Adapters.Mqtt.Internal.Codec;
using Broker.Adapters.Mqtt.Internal.Connections;
using static Broker.Mqtt.Tests.RawMqtt;

namespace Broker.Mqtt.Tests.ConnectionParts;

/// <summary>
/// The read side of a connection without a socket: packets framed whole however the bytes arrive, CONNECT first and
/// once, the fixed header's reserved flags, the packet size limit checked before the body is read, PINGREQ answered,
/// the keep alive and the CONNECT timeout measured, and the connection's close state.
/// </summary>
public sealed class PacketSessionTests
{
    private readonly PipeConnection connection = new();
    private readonly RecordingHandler handler = new();

    [Fact(Timeout = 10_000)]
    public async Task A_packet_split_across_reads_is_handed_over_whole_and_in_order()
    {
        var (session, status, _) = Session();
        var connect = Connect("split");
        var subscribe = Packet(0x82, U16(1), Str("a/b"), [0]);
        var loop = ReadLoopAsync(session);

        await connection.ClientOutput.WriteAsync(connect.AsMemory(0, 5));
        await Task.Delay(50);
        Assert.Empty(handler.Received);
        await connection.ClientOutput.WriteAsync(connect.AsMemory(5));
        Assert.True(await Broker.TestKit.Eventually.TrueAsync(() => handler.Received.Count == 1));
        session.MarkConnected(0);
        await connection.ClientOutput.WriteAsync(subscribe);
        await connection.ClientOutput.CompleteAsync();
        await loop;

        Assert.Equal([("CONNECT", Convert.ToHexString(connect, 2, connect.Length - 2)), ("SUBSCRIBE", Convert.ToHexString(subscribe, 2, subscribe.Length - 2))], handler.Received);
        Assert.Equal("client closed the connection", status.Reason);
    }

    [Fact(Timeout = 10_000)]
    public async Task The_first_packet_must_be_a_CONNECT()
    {
        var (session, _, _) = Session();
        await connection.ClientOutput.WriteAsync(Packet(0x30, Str("t"), [1]));
        var refused = await Assert.ThrowsAsync<MqttProtocolException>(() => ReadLoopAsync(session));
        Assert.Equal("the first packet should be a CONNECT (16), got 48", refused.Message);
        Assert.Empty(handler.Received);
    }

    [Fact(Timeout = 10_000)]
    public async Task A_second_CONNECT_is_a_protocol_error()
    {
        var (session, _, _) = Session();
        session.MarkConnected(60);
        await connection.ClientOutput.WriteAsync(Connect("again"));
        var refused = await Assert.ThrowsAsync<MqttProtocolException>(() => ReadLoopAsync(session));
        Assert.Equal(ReasonCode.ProtocolError, refused.Reason);
        Assert.Equal("received a second CONNECT packet", refused.Message);
    }

    [Fact(Timeout = 10_000)]
    public async Task A_packet_over_the_maximum_size_is_refused_from_its_length_alone()
    {
        var (session, _, _) = Session(maxPacketSize: 100);
        session.MarkConnected(60);

        // The header announces 200 bytes; none of them is sent.
        await connection.ClientOutput.WriteAsync(new byte[] { 0x30, 0xC8, 0x01 });
        var refused = await Assert.ThrowsAsync<MqttProtocolException>(() => ReadLoopAsync(session));
        Assert.Equal(ReasonCode.PacketTooLarge, refused.Reason);
        Assert.Equal("packet of 203 bytes exceeds the maximum packet size 100", refused.Message);
    }

    [Theory(Timeout = 10_000)]
    [InlineData(new byte[] { 0x80, 8, 0, 1, 0, 3, (byte)'a', (byte)'/', (byte)'b', 0 }, "invalid fixed header flags 0 for packet type 80")]
    [InlineData(new byte[] { 0xC0, 1, 0 }, "invalid remaining length 1 for PINGREQ")]
    public async Task Malformed_fixed_headers_are_refused(byte[] packet, string message)
    {
        var (session, _, _) = Session();
        session.MarkConnected(60);
        await connection.ClientOutput.WriteAsync(packet);
        var refused = await Assert.ThrowsAsync<MqttProtocolException>(() => ReadLoopAsync(session));
        Assert.Equal(ReasonCode.MalformedPacket, refused.Reason);
        Assert.Equal(message, refused.Message);
    }

    [Fact(Timeout = 10_000)]
    public async Task PINGREQ_is_answered_by_the_session_itself()
    {
        var (session, _, output) = Session();
        session.MarkConnected(60);
        await connection.ClientOutput.WriteAsync(new byte[] { 0xC0, 0 });
        await connection.ClientOutput.CompleteAsync();
        await ReadLoopAsync(session);

        Assert.Equal([(0xD0, "")], connection.Sent(output));
        Assert.Empty(handler.Received);
    }

    [Fact]
    public void The_keep_alive_expires_after_one_and_a_half_intervals_without_input()
    {
        var (session, _, _) = Session();
        var now = Environment.TickCount64;
        Assert.False(session.KeepAliveExpired(now + 10_000));
        session.MarkConnected(2);
        Assert.False(session.KeepAliveExpired(now + 2_900));
        Assert.True(session.KeepAliveExpired(now + 3_100));

        Assert.True(session.IsConnected);
        Assert.False(session.ConnectTimedOut(now + 400, readyAt: 0, TimeSpan.FromSeconds(1)));
        Assert.True(session.ConnectTimedOut(now + 1_100, readyAt: 0, TimeSpan.FromSeconds(1)));

        // A CONNECT that waited for the state to load is counted from when it was ready.
        Assert.False(session.ConnectTimedOut(now + 1_100, readyAt: now + 500, TimeSpan.FromSeconds(1)));
    }

    [Fact(Timeout = 10_000)]
    public async Task Closing_from_outside_wakes_the_read_loop_and_keeps_the_first_reason()
    {
        var (session, status, _) = Session();
        var loop = ReadLoopAsync(session);
        status.RequestClose("keep alive timeout");
        status.Close("later reason");
        await loop;

        Assert.True(status.IsClosing);
        Assert.Equal("keep alive timeout", status.Reason);
        status.CloseFor("client sent DISCONNECT");
        Assert.Equal("client sent DISCONNECT", status.Reason);
        Assert.True(status.TryBeginTeardown());
        Assert.False(status.TryBeginTeardown());
    }

    /// <summary>What the connection's loop does with the session (MqttConnection.RunAsync): read, process, until the input ends.</summary>
    private static async Task ReadLoopAsync(PacketSession session)
    {
        while (await session.ProcessAsync(await session.ReadAsync(CancellationToken.None), CancellationToken.None))
        {
        }
    }

    private (PacketSession Session, ConnectionStatus Status, PacketOutput Output) Session(int maxPacketSize = 1 << 20)
    {
        var (status, output) = connection.Parts();
        return (new PacketSession(maxPacketSize, output, handler), status, output);
    }

    /// <summary>Records the packets handed over, with a copy of each body.</summary>
    private sealed class RecordingHandler : IPacketHandler
    {
        public List<(string Packet, string Body)> Received { get; } = [];

        public ValueTask ConnectAsync(ReadOnlyMemory<byte> body, CancellationToken cancellationToken)
        {
            Received.Add(("CONNECT", Convert.ToHexString(body.Span)));
            return ValueTask.CompletedTask;
        }

        public void Publish(byte flags, ReadOnlyMemory<byte> body) => Received.Add(("PUBLISH", Convert.ToHexString(body.Span)));

        public void PubRel(ReadOnlySpan<byte> body) => Received.Add(("PUBREL", Convert.ToHexString(body)));

        public void DeliveryAck(PacketType type, ReadOnlySpan<byte> body) => Received.Add((type.ToString(), Convert.ToHexString(body)));

        public ValueTask SubscribeAsync(ReadOnlyMemory<byte> body, CancellationToken cancellationToken)
        {
            Received.Add(("SUBSCRIBE", Convert.ToHexString(body.Span)));
            return ValueTask.CompletedTask;
        }

        public void Unsubscribe(ReadOnlySpan<byte> body) => Received.Add(("UNSUBSCRIBE", Convert.ToHexString(body)));

        public void Disconnect(ReadOnlySpan<byte> body) => Received.Add(("DISCONNECT", Convert.ToHexString(body)));

        public CancellationToken Stopping => CancellationToken.None;

        public void LoopEnded(Exception? failure) => Received.Add(("END", failure?.GetType().Name ?? ""));
    }
}
