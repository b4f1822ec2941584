using System.Text;
using Broker.Abstractions;

namespace Broker.WebSocket.Tests;

/// <summary>Bad upgrade requests get nats-server's HTTP status with <c>Sec-Websocket-Version: 13</c>, and never a crash.</summary>
public sealed class HandshakeTests
{
    public static TheoryData<string, int> BadRequests => new()
    {
        { RawWebSocket.Request(method: "POST"), 405 },
        { RawWebSocket.Request(headers: ("Host", null)), 400 },
        { RawWebSocket.Request(headers: ("Upgrade", "h2c")), 400 },
        { RawWebSocket.Request(headers: ("Connection", "keep-alive")), 400 },
        { RawWebSocket.Request(headers: ("Sec-WebSocket-Key", null)), 400 },
        { RawWebSocket.Request(headers: ("Sec-WebSocket-Key", "dG9vIHNob3J0")), 400 },
        { RawWebSocket.Request(headers: ("Sec-WebSocket-Version", "8")), 400 },
        { RawWebSocket.Request(path: "/mqtt"), 404 },
        { RawWebSocket.Request(path: "/prefix/mqtt", method: "POST"), 404 },
        { "this is not http\r\n\r\n", 400 },
        { "GET / HTTP/1.1\r\nBroken header line\r\n\r\n", 400 },
        { "GET / HTTP/1.1\r\nX-Big: " + new string('a', 20_000) + "\r\n\r\n", 431 },
    };

    [Theory(Timeout = 30_000)]
    [MemberData(nameof(BadRequests))]
    public async Task A_bad_upgrade_request_is_answered_with_the_right_status_and_closed(string request, int status)
    {
        await using var broker = await WsBroker.StartAsync();
        await using var good = await WsNatsClient.ConnectAsync(broker.WebSocketUri());

        await using (var raw = await RawWebSocket.ConnectAsync(broker.WebSocketPort(), request))
        {
            Assert.True(status == raw.Status, raw.ResponseHead);
            Assert.Contains("Sec-Websocket-Version: 13", raw.ResponseHead, StringComparison.Ordinal);
            Assert.Null(await raw.ReadFrameAsync(TimeSpan.FromSeconds(5)));
        }

        // Other connections are unaffected.
        await good.SendAsync("PING\r\n");
        Assert.Equal("PONG", await good.ReadLineAsync());
    }

    [Fact(Timeout = 30_000)]
    public async Task Advertise_is_named_in_a_warning_at_start_not_dropped()
    {
        await using var broker = await WsBroker.StartAsync(null, ("advertise", "ws.example.com:443"));

        Assert.True(broker.Logs.Contains("Websocket advertise \"ws.example.com:443\" ignored"), string.Join("\n", broker.Logs.Entries));
    }

    [Fact(Timeout = 30_000)]
    public async Task A_valid_request_is_accepted_with_the_rfc_6455_accept_key_and_configured_headers()
    {
        await using var broker = await WsBroker.StartAsync(null, ("headers:X-Served-By", "broker"));
        const string Key = "dGhlIHNhbXBsZSBub25jZQ==";
        await using var raw = await RawWebSocket.ConnectAsync(broker.WebSocketPort(), RawWebSocket.Request(path: "/any/path", headers: ("Sec-WebSocket-Key", Key)));

        Assert.Equal(101, raw.Status);
        Assert.Contains("Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=", raw.ResponseHead, StringComparison.Ordinal);
        Assert.Contains("X-Served-By: broker", raw.ResponseHead, StringComparison.Ordinal);
        Assert.StartsWith("INFO ", await raw.ReadLineAsync(), StringComparison.Ordinal);
    }

    [Fact(Timeout = 30_000)]
    public async Task A_client_that_never_finishes_its_request_is_closed_after_the_handshake_timeout()
    {
        await using var broker = await WsBroker.StartAsync(null, ("handshake_timeout", "300ms"));
        using var socket = new System.Net.Sockets.Socket(System.Net.Sockets.SocketType.Stream, System.Net.Sockets.ProtocolType.Tcp);
        await socket.ConnectAsync(new System.Net.IPEndPoint(System.Net.IPAddress.Loopback, broker.WebSocketPort()));
        await socket.SendAsync(Encoding.ASCII.GetBytes("GET / HTTP/1.1\r\nHost: x\r\n"));

        using var cts = new CancellationTokenSource(TimeSpan.FromSeconds(10));
        var buffer = new byte[256];
        Assert.Equal(0, await socket.ReceiveAsync(buffer, cts.Token));
    }

    [Theory(Timeout = 30_000)]
    [InlineData("http://good.example", 101)]
    [InlineData("http://good.example:8080", 403)]
    [InlineData("https://good.example", 403)]
    [InlineData("http://evil.example", 403)]
    [InlineData(null, 101)]
    public async Task Allowed_origins_are_enforced_when_an_origin_is_sent(string? origin, int status)
    {
        await using var broker = await WsBroker.StartAsync(null, ("allowed_origins:0", "http://good.example"));
        await using var raw = await RawWebSocket.ConnectAsync(broker.WebSocketPort(), RawWebSocket.Request(headers: ("Origin", origin)));
        Assert.Equal(status, raw.Status);
    }

    [Theory(Timeout = 30_000)]
    [InlineData(true, 101)]
    [InlineData(false, 403)]
    public async Task Same_origin_compares_the_origin_with_the_host_header(bool same, int status)
    {
        await using var broker = await WsBroker.StartAsync(null, ("same_origin", "true"));
        var host = $"127.0.0.1:{broker.WebSocketPort()}";
        var origin = same ? "http://" + host : "http://localhost:1";
        await using var raw = await RawWebSocket.ConnectAsync(broker.WebSocketPort(), RawWebSocket.Request(headers: [("Host", host), ("Origin", origin)]));
        Assert.Equal(status, raw.Status);
    }

    [Fact(Timeout = 30_000)]
    public async Task Bad_settings_are_refused_at_startup()
    {
        var origin = await Assert.ThrowsAsync<PluginConfigurationException>(() => WsBroker.StartAsync(null, ("allowed_origins:0", "ftp://x")));
        Assert.StartsWith("Plugins:WebSocket: unable to parse allowed origin", origin.Message, StringComparison.Ordinal);
        var header = await Assert.ThrowsAsync<PluginConfigurationException>(() => WsBroker.StartAsync(null, ("headers:Sec-WebSocket-Extensions", "x")));
        Assert.Contains("invalid header", header.Message, StringComparison.Ordinal);
        Assert.Equal("Plugins:WebSocket:headers:Sec-WebSocket-Extensions", header.Key);
        var unsupported = await Assert.ThrowsAsync<PluginConfigurationException>(() => WsBroker.StartAsync(null, ("no_auth_user", "x")));
        Assert.Contains("not supported", unsupported.Message, StringComparison.Ordinal);

        // Values in nats-server's syntax, through the contract's shared reader: errors name the key.
        var timeout = await Assert.ThrowsAsync<PluginConfigurationException>(() => WsBroker.StartAsync(null, ("handshake_timeout", "2 seconds")));
        Assert.Equal("Plugins:WebSocket:handshake_timeout: time: unknown unit \" seconds\" in duration \"2 seconds\"", timeout.Message);
        var size = await Assert.ThrowsAsync<PluginConfigurationException>(() => WsBroker.StartAsync(null, ("max_message_size", "1XB")));
        Assert.Equal("Plugins:WebSocket:max_message_size: integer '1XB' has an unknown size suffix 'XB'", size.Message);
    }
}
