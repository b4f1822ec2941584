using System.Net.WebSockets;
using System.Text.Json;
using Broker.Abstractions;
using Broker.Core.Auth;
using Broker.TestKit;

namespace Broker.WebSocket.Tests;

/// <summary>NATS over WebSocket with <see cref="ClientWebSocket"/>: ws and wss, with TCP clients, auth from cookies, compression.</summary>
public sealed class MessagingTests
{
    [Fact(Timeout = 30_000)]
    public async Task Ws_clients_exchange_messages_with_each_other_and_with_tcp_clients()
    {
        await using var broker = await WsBroker.StartAsync();
        await using var ws = await WsNatsClient.ConnectAsync(broker.WebSocketUri());
        await using var tcp = await RawClient.ConnectAsync(broker.Port);

        using (var info = JsonDocument.Parse(ws.Info["INFO ".Length..]))
        {
            Assert.Equal(broker.WebSocketPort(), info.RootElement.GetProperty("port").GetInt32());
            Assert.False(info.RootElement.TryGetProperty("tls_required", out _));
        }

        await ws.SendAsync("CONNECT {\"verbose\":false}\r\nSUB from.tcp 1\r\nPING\r\n");
        Assert.Equal("PONG", await ws.ReadLineAsync());
        await tcp.SendAsync("CONNECT {\"verbose\":false}\r\nSUB from.ws 9\r\nPUB from.tcp 5\r\nhello\r\n");
        Assert.Equal(["PONG"], (await tcp.PingAndCollectAsync()).Lines);

        Assert.Equal("MSG from.tcp 1 5", await ws.ReadLineAsync());
        Assert.Equal("hello", await ws.ReadLineAsync());

        await ws.SendAsync("PUB from.ws 6\r\nthere!\r\nPING\r\n");
        Assert.Equal("PONG", await ws.ReadLineAsync());
        Assert.Equal(["MSG from.ws 9 6", "there!", "PONG"], (await tcp.PingAndCollectAsync()).Lines);
    }

    [Fact(Timeout = 30_000)]
    public async Task Wss_goes_through_the_tls_middleware_with_the_websocket_blocks_certificate()
    {
        await using var broker = await WsBroker.StartSecureAsync();
        await using var a = await WsNatsClient.ConnectAsync(broker.WebSocketUri("wss"));
        await using var b = await WsNatsClient.ConnectAsync(broker.WebSocketUri("wss"));

        using (var info = JsonDocument.Parse(a.Info["INFO ".Length..]))
        {
            Assert.True(info.RootElement.GetProperty("tls_required").GetBoolean());
        }

        await a.SendAsync("CONNECT {\"verbose\":false}\r\nSUB secure.ws 1\r\nPING\r\n");
        Assert.Equal("PONG", await a.ReadLineAsync());
        await b.SendAsync("CONNECT {\"verbose\":false}\r\nPUB secure.ws 2\r\nok\r\nPING\r\n");
        Assert.Equal("PONG", await b.ReadLineAsync());
        Assert.Equal("MSG secure.ws 1 2", await a.ReadLineAsync());
        Assert.Equal("ok", await a.ReadLineAsync());

        // The client port itself stays clear text: the WebSocket block's TLS is its own.
        await using var tcp = await RawClient.ConnectAsync(broker.Port);
        Assert.DoesNotContain("tls_required", tcp.Info, StringComparison.Ordinal);
    }

    [Fact(Timeout = 30_000)]
    public async Task Without_tls_or_no_tls_the_broker_refuses_to_start()
    {
        var error = await Assert.ThrowsAsync<PluginConfigurationException>(() => WsBroker.StartAsync(null, ("no_tls", null)));
        Assert.Contains("websocket requires TLS configuration", error.Message, StringComparison.Ordinal);
    }

    [Fact(Timeout = 30_000)]
    public async Task Cookies_fill_empty_connect_credentials()
    {
        await using var broker = await WsBroker.StartAsync(
            options => options.Authorization.Users = [new UserOptions { User = "webuser", Password = "webpass" }],
            ("user_cookie", "nats_user"),
            ("pass_cookie", "nats_pass"));

        await using (var withCookies = await WsNatsClient.ConnectAsync(
            broker.WebSocketUri(), o => o.SetRequestHeader("Cookie", "other=1; nats_user=webuser; nats_pass=webpass")))
        {
            await withCookies.SendAsync("CONNECT {\"verbose\":false}\r\nPING\r\n");
            Assert.Equal("PONG", await withCookies.ReadLineAsync());
        }

        await using var without = await WsNatsClient.ConnectAsync(broker.WebSocketUri());
        await without.SendAsync("CONNECT {\"verbose\":false}\r\nPING\r\n");
        var (lines, _) = await without.ExpectClosedAsync();
        Assert.Equal(["-ERR 'Authorization Violation'"], lines);
    }

    [Fact(Timeout = 30_000)]
    public async Task A_token_cookie_authenticates_and_connect_values_win_over_cookies()
    {
        await using var broker = await WsBroker.StartAsync(options => options.Authorization.Token = "s3cret", ("token_cookie", "tok"));

        await using (var cookie = await WsNatsClient.ConnectAsync(broker.WebSocketUri(), o => o.SetRequestHeader("Cookie", "tok=s3cret")))
        {
            await cookie.SendAsync("CONNECT {\"verbose\":false}\r\nPING\r\n");
            Assert.Equal("PONG", await cookie.ReadLineAsync());
        }

        await using var wrong = await WsNatsClient.ConnectAsync(broker.WebSocketUri(), o => o.SetRequestHeader("Cookie", "tok=s3cret"));
        await wrong.SendAsync("CONNECT {\"verbose\":false,\"auth_token\":\"bad\"}\r\nPING\r\n");
        Assert.Equal(["-ERR 'Authorization Violation'"], (await wrong.ExpectClosedAsync()).Lines);
    }

    [Fact(Timeout = 30_000)]
    public async Task X_forwarded_for_becomes_the_client_ip()
    {
        await using var broker = await WsBroker.StartAsync();
        await using var client = await WsNatsClient.ConnectAsync(broker.WebSocketUri(), o => o.SetRequestHeader("X-Forwarded-For", "203.0.113.7, 10.0.0.1"));

        using var info = JsonDocument.Parse(client.Info["INFO ".Length..]);
        Assert.Equal("203.0.113.7", info.RootElement.GetProperty("client_ip").GetString());
    }

    [Fact(Timeout = 30_000)]
    public async Task Permessage_deflate_is_negotiated_and_carries_large_messages_both_ways()
    {
        await using var broker = await WsBroker.StartAsync(null, ("compression", "true"));
        var deflate = new WebSocketDeflateOptions { ClientContextTakeover = false, ServerContextTakeover = false };
        await using var a = await WsNatsClient.ConnectAsync(broker.WebSocketUri(), o => o.DangerousDeflateOptions = deflate);
        await using var b = await WsNatsClient.ConnectAsync(broker.WebSocketUri(), o => o.DangerousDeflateOptions = deflate);

        Assert.Contains("permessage-deflate", string.Join(";", a.Socket.HttpResponseHeaders!["Sec-WebSocket-Extensions"]), StringComparison.Ordinal);
        var payload = string.Concat(Enumerable.Repeat("compressible text ", 2000));
        await a.SendAsync("CONNECT {\"verbose\":false}\r\nSUB big 1\r\nPING\r\n");
        Assert.Equal("PONG", await a.ReadLineAsync());
        await b.SendAsync($"CONNECT {{\"verbose\":false}}\r\nPUB big {payload.Length}\r\n{payload}\r\nPING\r\n");
        Assert.Equal("PONG", await b.ReadLineAsync());

        Assert.Equal($"MSG big 1 {payload.Length}", await a.ReadLineAsync());
        Assert.Equal(payload, await a.ReadLineAsync());
    }

    [Fact(Timeout = 30_000)]
    public async Task Compressed_messages_in_a_row_small_large_and_small_again_arrive_whole_both_ways()
    {
        // The connection keeps its compression buffers between messages up to a size and drops larger ones: every
        // message after one, bigger or smaller, must still arrive exactly.
        await using var broker = await WsBroker.StartAsync(null, ("compression", "true"));
        var deflate = new WebSocketDeflateOptions { ClientContextTakeover = false, ServerContextTakeover = false };
        await using var a = await WsNatsClient.ConnectAsync(broker.WebSocketUri(), o => o.DangerousDeflateOptions = deflate);
        await using var b = await WsNatsClient.ConnectAsync(broker.WebSocketUri(), o => o.DangerousDeflateOptions = deflate);
        await a.SendAsync("CONNECT {\"verbose\":false}\r\nSUB many 1\r\nPING\r\n");
        Assert.Equal("PONG", await a.ReadLineAsync());
        await b.SendAsync("CONNECT {\"verbose\":false}\r\nPING\r\n");
        Assert.Equal("PONG", await b.ReadLineAsync());

        var random = new Random(19);
        string Text(int length) => string.Create(length, random, (span, r) =>
        {
            for (var i = 0; i < span.Length; i++)
            {
                span[i] = (char)r.Next('a', 'z' + 1); // hardly compressible: the large one stays large compressed
            }
        });
        string[] payloads = [string.Concat(Enumerable.Repeat("small text ", 20)), Text(150_000), Text(300), Text(90_000), "tiny but over the threshold of 64 bytes, so it is compressed too"];
        foreach (var payload in payloads)
        {
            await b.SendAsync($"PUB many {payload.Length}\r\n{payload}\r\n");
            Assert.Equal($"MSG many 1 {payload.Length}", await a.ReadLineAsync());
            Assert.Equal(payload, await a.ReadLineAsync());
        }
    }

    [Fact(Timeout = 30_000)]
    public async Task Without_compression_configured_no_extension_is_agreed()
    {
        await using var broker = await WsBroker.StartAsync();
        var deflate = new WebSocketDeflateOptions { ClientContextTakeover = false, ServerContextTakeover = false };
        await using var client = await WsNatsClient.ConnectAsync(broker.WebSocketUri(), o => o.DangerousDeflateOptions = deflate);

        Assert.False(client.Socket.HttpResponseHeaders!.ContainsKey("Sec-WebSocket-Extensions"));
        await client.SendAsync("PING\r\n");
        Assert.Equal("PONG", await client.ReadLineAsync());
    }
}
