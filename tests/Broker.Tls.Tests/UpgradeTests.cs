using System.Text.Json;
using Broker.TestKit;

namespace Broker.Tls.Tests;

/// <summary>The NATS upgrade: INFO in clear text with tls_required, then TLS on the same socket.</summary>
public sealed class UpgradeTests
{
    [Fact(Timeout = 30_000)]
    public async Task Info_announces_tls_and_pub_sub_works_after_the_upgrade()
    {
        await using var broker = await TlsBroker.StartAsync(TlsBroker.Settings());
        await using var subscriber = await SecureClient.ConnectAsync(broker.Port);
        await using var publisher = await SecureClient.ConnectAsync(broker.Port);

        using var info = JsonDocument.Parse(subscriber.Info!["INFO ".Length..]);
        Assert.True(info.RootElement.GetProperty("tls_required").GetBoolean());
        Assert.False(info.RootElement.TryGetProperty("tls_available", out _));
        Assert.False(info.RootElement.TryGetProperty("tls_verify", out _));
        Assert.NotNull(subscriber.Ssl);

        await subscriber.SendAsync("CONNECT {\"verbose\":false}\r\nSUB secure.> 1\r\nPING\r\n");
        Assert.Equal("PONG", await subscriber.ReadLineAsync());
        await publisher.SendAsync("CONNECT {\"verbose\":false}\r\nPUB secure.hello 5\r\nworld\r\nPING\r\n");
        Assert.Equal("PONG", await publisher.ReadLineAsync());

        Assert.Equal("MSG secure.hello 1 5", await subscriber.ReadLineAsync());
        Assert.Equal("world", await subscriber.ReadLineAsync());
    }

    [Fact(Timeout = 30_000)]
    public async Task Clear_text_after_info_gets_secure_connection_required_and_is_closed()
    {
        await using var broker = await TlsBroker.StartAsync(TlsBroker.Settings());
        await using var client = await SecureClient.ConnectAsync(broker.Port, TlsStart.None);

        await client.SendAsync("CONNECT {}\r\nPING\r\n");

        var lines = await client.ExpectClosedAsync();
        Assert.Equal(["-ERR 'Secure Connection - TLS Required'"], lines);
    }

    [Fact(Timeout = 30_000)]
    public async Task A_client_that_says_nothing_is_told_tls_is_required_after_the_handshake_timeout()
    {
        await using var broker = await TlsBroker.StartAsync(TlsBroker.Settings(("timeout", "0.3")));
        await using var client = await SecureClient.ConnectAsync(broker.Port, TlsStart.None);

        var lines = await client.ExpectClosedAsync(TimeSpan.FromSeconds(10));
        Assert.Equal(["-ERR 'Secure Connection - TLS Required'"], lines);
    }

    [Fact(Timeout = 30_000)]
    public async Task A_handshake_that_stalls_is_closed_after_the_timeout_without_clear_text()
    {
        await using var broker = await TlsBroker.StartAsync(TlsBroker.Settings(("timeout", "300ms")));
        await using var client = await SecureClient.ConnectAsync(broker.Port, TlsStart.None);

        // The start of a TLS record (handshake, TLS 1.2), then nothing.
        await client.SendAsync([0x16, 0x03, 0x03, 0x00]);

        var lines = await client.ExpectClosedAsync(TimeSpan.FromSeconds(10));
        Assert.Empty(lines);

        // The broker is unaffected.
        await using var next = await SecureClient.ConnectAsync(broker.Port);
        await next.SendAsync("PING\r\n");
        Assert.Equal("PONG", await next.ReadLineAsync());
    }

    [Fact(Timeout = 30_000)]
    public async Task Garbage_instead_of_a_client_hello_fails_the_handshake_and_the_broker_keeps_serving()
    {
        await using var broker = await TlsBroker.StartAsync(TlsBroker.Settings());
        await using (var client = await SecureClient.ConnectAsync(broker.Port, TlsStart.None))
        {
            await client.SendAsync([0x16, 0x03, 0x01, 0x00, 0x05, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]);
            var lines = await client.ExpectClosedAsync(TimeSpan.FromSeconds(10));
            Assert.DoesNotContain(lines, l => l.StartsWith("INFO", StringComparison.Ordinal));
        }

        await using var next = await SecureClient.ConnectAsync(broker.Port);
        await next.SendAsync("PING\r\n");
        Assert.Equal("PONG", await next.ReadLineAsync());
    }

    [Fact(Timeout = 30_000)]
    public async Task Allow_non_tls_offers_tls_and_serves_both_kinds_of_client_on_one_port()
    {
        await using var broker = await TlsBroker.StartAsync(TlsBroker.Settings(("allow_non_tls", "true")));
        await using var plain = await SecureClient.ConnectAsync(broker.Port, TlsStart.None);
        await using var secure = await SecureClient.ConnectAsync(broker.Port, TlsStart.Upgrade);

        using var info = JsonDocument.Parse(plain.Info!["INFO ".Length..]);
        Assert.True(info.RootElement.GetProperty("tls_available").GetBoolean());
        Assert.False(info.RootElement.TryGetProperty("tls_required", out _));

        await plain.SendAsync("CONNECT {\"verbose\":false}\r\nSUB mixed 1\r\nPING\r\n");
        Assert.Equal("PONG", await plain.ReadLineAsync());
        await secure.SendAsync("CONNECT {\"verbose\":false}\r\nSUB mixed 2\r\nPUB mixed 2\r\nhi\r\nPING\r\n");

        Assert.Equal(["MSG mixed 2 2", "hi", "PONG"], await secure.ReadUntilAsync("PONG"));
        Assert.Equal("MSG mixed 1 2", await plain.ReadLineAsync());
        Assert.Equal("hi", await plain.ReadLineAsync());
    }

    [Fact(Timeout = 30_000)]
    public async Task Allow_non_tls_keeps_a_silent_client_in_clear_text_as_nats_server_does()
    {
        await using var broker = await TlsBroker.StartAsync(TlsBroker.Settings(("allow_non_tls", "true"), ("timeout", "0.2")));
        await using var plain = await SecureClient.ConnectAsync(broker.Port, TlsStart.None);

        // Longer than the handshake timeout: the broker gives up waiting for TLS and reads clear text.
        await Task.Delay(400);
        await plain.SendAsync("PING\r\n");
        Assert.Equal("PONG", await plain.ReadLineAsync());
    }

    [Fact(Timeout = 30_000)]
    public async Task Without_the_plugin_configured_the_client_port_stays_clear_text()
    {
        await using var broker = await TlsBroker.StartAsync([]);
        await using var raw = await RawClient.ConnectAsync(broker.Port);

        Assert.DoesNotContain("tls_", raw.Info, StringComparison.Ordinal);
        var transcript = await raw.PingAndCollectAsync();
        Assert.Equal(["PONG"], transcript.Lines);
    }
}
