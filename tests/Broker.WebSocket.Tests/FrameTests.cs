using System.Text;

namespace Broker.WebSocket.Tests;

/// <summary>Frames: fragmentation, control frames, the close handshake and every framing error's close code.</summary>
public sealed class FrameTests
{
    [Fact(Timeout = 30_000)]
    public async Task Fragmented_messages_and_ops_split_across_frames_are_reassembled_with_pings_in_between()
    {
        await using var broker = await WsBroker.StartAsync();
        await using var raw = await RawWebSocket.ConnectAsync(broker.WebSocketPort());
        Assert.Equal(101, raw.Status);
        Assert.StartsWith("INFO ", await raw.ReadLineAsync(), StringComparison.Ordinal);

        await raw.SendFrameAsync(1, "CONNECT {\"verbose\":false}\r\nSUB frag 1\r\nPUB fr", final: false);
        await raw.SendFrameAsync(9, "are you there?");
        await raw.SendFrameAsync(0, "ag 5\r\nhel", final: false);
        await raw.SendFrameAsync(0, "lo\r\nPI", final: false);
        await raw.SendFrameAsync(0, "NG\r\n");

        var pong = await raw.ReadFrameAsync();
        Assert.Equal(10, pong!.Value.Opcode);
        Assert.Equal("are you there?", Encoding.UTF8.GetString(pong.Value.Payload));
        Assert.Equal("MSG frag 1 5", await raw.ReadLineAsync());
        Assert.Equal("hello", await raw.ReadLineAsync());
        Assert.Equal("PONG", await raw.ReadLineAsync());
    }

    [Fact(Timeout = 30_000)]
    public async Task The_server_sends_unmasked_binary_frames()
    {
        await using var broker = await WsBroker.StartAsync();
        await using var raw = await RawWebSocket.ConnectAsync(broker.WebSocketPort());
        var frame = await raw.ReadFrameAsync();
        Assert.True(frame!.Value.Final);
        Assert.Equal(2, frame.Value.Opcode);
    }

    [Fact(Timeout = 30_000)]
    public async Task A_close_frame_is_echoed_and_the_connection_ends()
    {
        await using var broker = await WsBroker.StartAsync();
        await using var raw = await RawWebSocket.ConnectAsync(broker.WebSocketPort());
        var payload = new byte[] { 0x03, 0xE8 }.Concat(Encoding.UTF8.GetBytes("bye")).ToArray();
        await raw.SendRawAsync(RawWebSocket.Frame(8, payload));

        var (status, reason, closed) = await raw.ExpectCloseAsync();
        Assert.Equal(1000, status);
        Assert.Equal("bye", reason);
        Assert.True(closed);
    }

    public static TheoryData<byte[], int, string> BadFrames => new()
    {
        { RawWebSocket.Frame(2, Encoding.ASCII.GetBytes("PING\r\n"), masked: false), 1002, "mask bit missing" },
        { RawWebSocket.Frame(3, [1, 2, 3]), 1002, "unknown opcode 3" },
        { RawWebSocket.Frame(9, new byte[126]), 1002, "control frame length bigger than maximum allowed of 125 bytes" },
        { RawWebSocket.Frame(9, [1], final: false), 1002, "control frame does not have final bit set" },
        { RawWebSocket.Frame(8, [0x03]), 1002, "close frame payload cannot be 1 byte" },
        { RawWebSocket.Frame(8, [0x03, 0xE7]), 1002, "invalid close status code 999" },
        { RawWebSocket.Frame(8, [0x03, 0xE8, 0xFF, 0xFE]), 1007, "invalid utf8 body in close frame" },
        { RawWebSocket.Frame(0, Encoding.ASCII.GetBytes("PING\r\n")), 1002, "invalid continuation frame" },
        { RawWebSocket.Frame(2, Encoding.ASCII.GetBytes("PING\r\n"), reserved: 0x20), 1002, "RSV2 and RSV3 must be clear" },
        { RawWebSocket.Frame(2, Encoding.ASCII.GetBytes("PING\r\n"), reserved: 0x40), 1002, "compressed frame received without negotiated permessage-deflate" },
        { [.. RawWebSocket.Frame(2, Encoding.ASCII.GetBytes("PI"), final: false), .. RawWebSocket.Frame(2, Encoding.ASCII.GetBytes("NG\r\n"))], 1002, "new message started before final frame for previous message was received" },
        { RawWebSocket.Frame(2, new byte[5000]), 1009, "maximum message size exceeded" },
    };

    [Theory(Timeout = 30_000)]
    [MemberData(nameof(BadFrames))]
    public async Task A_framing_error_is_answered_with_its_close_code_and_others_carry_on(byte[] frame, int status, string reason)
    {
        await using var broker = await WsBroker.StartAsync(null, ("max_message_size", "4096"));
        await using var bystander = await WsNatsClient.ConnectAsync(broker.WebSocketUri());
        await using var raw = await RawWebSocket.ConnectAsync(broker.WebSocketPort());
        Assert.StartsWith("INFO ", await raw.ReadLineAsync(), StringComparison.Ordinal);

        await raw.SendRawAsync(frame);

        var close = await raw.ExpectCloseAsync();
        Assert.Equal(status, close.Status);
        Assert.Equal(reason, close.Reason);
        Assert.True(close.SocketClosed);
        await bystander.SendAsync("PING\r\n");
        Assert.Equal("PONG", await bystander.ReadLineAsync());
    }

    [Fact(Timeout = 30_000)]
    public async Task Data_before_a_framing_error_is_still_processed()
    {
        await using var broker = await WsBroker.StartAsync();
        await using var raw = await RawWebSocket.ConnectAsync(broker.WebSocketPort());
        Assert.StartsWith("INFO ", await raw.ReadLineAsync(), StringComparison.Ordinal);
        await raw.SendRawAsync([
            .. RawWebSocket.Frame(2, Encoding.ASCII.GetBytes("CONNECT {\"verbose\":false}\r\nSUB keep 1\r\nPUB keep 2\r\nok\r\n")),
            .. RawWebSocket.Frame(3, []),
        ]);

        Assert.Equal("MSG keep 1 2", await raw.ReadLineAsync());
        Assert.Equal("ok", await raw.ReadLineAsync());
        Assert.Equal(1002, (await raw.ExpectCloseAsync()).Status);
    }

    [Fact(Timeout = 30_000)]
    public async Task A_protocol_error_of_the_nats_client_arrives_before_the_close_frame()
    {
        await using var broker = await WsBroker.StartAsync();
        await using var client = await WsNatsClient.ConnectAsync(broker.WebSocketUri());
        await client.SendAsync("BOGUS\r\n");
        var (lines, status) = await client.ExpectClosedAsync();
        Assert.Equal(["-ERR 'Unknown Protocol Operation'"], lines);
        Assert.NotNull(status);
    }

    [Fact(Timeout = 60_000)]
    public async Task A_websocket_subscriber_that_stops_reading_is_closed_as_a_slow_consumer()
    {
        await using var broker = await WsBroker.StartAsync(options =>
        {
            options.MaxPending = 256 * 1024;
            options.MaxPayload = 64 * 1024;
        });
        await using var stalled = await RawWebSocket.ConnectAsync(broker.WebSocketPort());
        Assert.StartsWith("INFO ", await stalled.ReadLineAsync(), StringComparison.Ordinal);
        await stalled.SendFrameAsync(2, "CONNECT {\"verbose\":false}\r\nSUB flood 1\r\nPING\r\n");
        Assert.Equal("PONG", await stalled.ReadLineAsync());

        // The client reads nothing from here on; the socket buffers absorb some megabytes first.
        await using var bus = broker.Bus.CreateClient();
        var payload = new byte[60 * 1024];
        var deadline = DateTime.UtcNow.AddSeconds(40);
        var published = 0L;
        while (!broker.Logs.Contains("Slow Consumer (Pending Bytes)") && DateTime.UtcNow < deadline && published < 2L * 1024 * 1024 * 1024)
        {
            Broker.Abstractions.BusClientExtensions.Publish(bus, "flood", payload);
            published += payload.Length;
        }

        Assert.True(broker.Logs.Contains("Slow Consumer (Pending Bytes)"), $"no slow consumer after {published} bytes");
    }
}
