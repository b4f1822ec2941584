using System.Text.Json;
using Broker.TestKit;

namespace Broker.Tls.Tests;

/// <summary><c>handshake_first</c>: TLS before INFO, optionally falling back to the upgrade for clients that wait.</summary>
public sealed class HandshakeFirstTests
{
    [Fact(Timeout = 30_000)]
    public async Task Tls_first_clients_get_info_over_tls_and_exchange_messages()
    {
        await using var broker = await TlsBroker.StartAsync(TlsBroker.Settings(("handshake_first", "true")));
        await using var a = await SecureClient.ConnectAsync(broker.Port, TlsStart.First);
        await using var b = await SecureClient.ConnectAsync(broker.Port, TlsStart.First);

        using var info = JsonDocument.Parse(a.Info!["INFO ".Length..]);
        Assert.True(info.RootElement.GetProperty("tls_required").GetBoolean());

        await a.SendAsync("CONNECT {\"verbose\":false}\r\nSUB first 1\r\nPING\r\n");
        Assert.Equal("PONG", await a.ReadLineAsync());
        await b.SendAsync("CONNECT {\"verbose\":false}\r\nPUB first 3\r\nabc\r\nPING\r\n");
        Assert.Equal("PONG", await b.ReadLineAsync());
        Assert.Equal("MSG first 1 3", await a.ReadLineAsync());
        Assert.Equal("abc", await a.ReadLineAsync());
    }

    [Fact(Timeout = 30_000)]
    public async Task Tls_first_without_fallback_sends_no_info_in_clear_text()
    {
        await using var broker = await TlsBroker.StartAsync(TlsBroker.Settings(("handshake_first", "true"), ("timeout", "0.3")));
        await using var client = await SecureClient.OpenAsync(broker.Port);

        var lines = await client.ExpectClosedAsync(TimeSpan.FromSeconds(10));
        Assert.Empty(lines);
    }

    [Fact(Timeout = 30_000)]
    public async Task A_fallback_serves_tls_first_and_upgrading_clients()
    {
        // "auto" waits only 50 ms, which a loaded test machine can miss before its ClientHello leaves (the client
        // would then read INFO as TLS, as it would with nats-server); a longer wait keeps the test deterministic.
        await using var broker = await TlsBroker.StartAsync(TlsBroker.Settings(("handshake_first", "2s")));
        await using var first = await SecureClient.ConnectAsync(broker.Port, TlsStart.First);
        await using var upgrading = await SecureClient.ConnectAsync(broker.Port, TlsStart.Upgrade);

        using var info = JsonDocument.Parse(upgrading.Info!["INFO ".Length..]);
        Assert.True(info.RootElement.GetProperty("tls_required").GetBoolean());
        foreach (var client in new[] { first, upgrading })
        {
            await client.SendAsync("PING\r\n");
            Assert.Equal("PONG", await client.ReadLineAsync());
        }
    }

    [Fact(Timeout = 30_000)]
    public async Task A_fallback_duration_is_accepted_like_nats_server()
    {
        await using var broker = await TlsBroker.StartAsync(TlsBroker.Settings(("handshake_first", "100ms")));
        await using var upgrading = await SecureClient.ConnectAsync(broker.Port, TlsStart.Upgrade);
        await upgrading.SendAsync("PING\r\n");
        Assert.Equal("PONG", await upgrading.ReadLineAsync());
        Assert.Contains(broker.Logs.Entries, e => e.Message.Contains("falling back", StringComparison.Ordinal));
    }
}
