using System.Globalization;
using System.Text.Json;
using Broker.Core;

namespace Broker.Monitoring.Tests;

/// <summary>/varz against what real clients did: connection counts, message counters, configuration in force.</summary>
public sealed class VarzTests
{
    [Fact(Timeout = 30_000)]
    public async Task Counts_connections_messages_and_subscriptions_of_real_clients()
    {
        // Without the system account, whose own subscriptions (its request services) count too, as nats-server's do.
        await using var broker = await MonitoredBroker.StartAsync(o => o.NoSystemAccount = true);
        await using var subscriber = await broker.ConnectAsync();
        await using var publisher = await broker.ConnectAsync();
        await subscriber.SendAsync("SUB foo 1\r\nSUB bar 2\r\n");
        await subscriber.PingAndCollectAsync();
        await publisher.SendAsync("PUB foo 5\r\nhello\r\nPUB foo 3\r\nabc\r\nPUB nobody 2\r\nxy\r\n");
        await publisher.PingAndCollectAsync();
        var received = await subscriber.PingAndCollectAsync();
        Assert.Equal(["MSG foo 1 5", "hello", "MSG foo 1 3", "abc", "PONG"], received.Lines);

        var varz = await broker.GetJsonAsync("/varz");
        Assert.Equal(2, varz.GetProperty("connections").GetInt32());
        Assert.Equal(2, varz.GetProperty("total_connections").GetInt64());
        Assert.Equal(2, varz.GetProperty("subscriptions").GetInt32());
        Assert.Equal(3, varz.GetProperty("in_msgs").GetInt64());
        Assert.Equal(10, varz.GetProperty("in_bytes").GetInt64());
        Assert.Equal(2, varz.GetProperty("out_msgs").GetInt64());
        Assert.Equal(8, varz.GetProperty("out_bytes").GetInt64());
        Assert.Equal(3, varz.GetProperty("in_client_msgs").GetInt64());
        Assert.Equal(0, varz.GetProperty("slow_consumers").GetInt64());

        // A closed connection leaves "connections" but stays in "total_connections".
        await publisher.SendAsync("garbage\r\n");
        await publisher.ExpectClosedAsync();
        await Eventually.AssertAsync(
            async () => (await broker.GetJsonAsync("/varz")).GetProperty("connections").GetInt32() == 1,
            "the closed connection to leave /varz");
        varz = await broker.GetJsonAsync("/varz");
        Assert.Equal(2, varz.GetProperty("total_connections").GetInt64());
    }

    [Fact(Timeout = 30_000)]
    public async Task Reports_identity_configuration_and_process_fields_as_nats_server_encodes_them()
    {
        await using var broker = await MonitoredBroker.StartAsync(options =>
        {
            options.ServerName = "varz-test";
            options.MaxPayload = 512 * 1024;
            options.PingInterval = TimeSpan.FromSeconds(30);
            options.MaxSubscriptions = 100;
        });
        var varz = await broker.GetJsonAsync("/varz");

        Assert.Equal(broker.Server.ServerId, varz.GetProperty("server_id").GetString());
        Assert.Equal("varz-test", varz.GetProperty("server_name").GetString());
        Assert.Equal(BrokerServer.CompatibleNatsServerVersion, varz.GetProperty("version").GetString());
        Assert.Equal(BrokerServer.Version, varz.GetProperty("broker_version").GetString());
        Assert.Equal(1, varz.GetProperty("proto").GetInt32());
        Assert.Equal("127.0.0.1", varz.GetProperty("host").GetString());
        Assert.Equal(broker.Broker.Port, varz.GetProperty("port").GetInt32());
        Assert.Equal(broker.MonitorEndPoint.Port, varz.GetProperty("http_port").GetInt32());
        Assert.Equal("127.0.0.1", varz.GetProperty("http_host").GetString());
        Assert.Equal(512 * 1024, varz.GetProperty("max_payload").GetInt32());
        Assert.Equal(100, varz.GetProperty("max_subscriptions").GetInt32());
        Assert.Equal(65536, varz.GetProperty("max_connections").GetInt32());
        Assert.Equal(64L * 1024 * 1024, varz.GetProperty("max_pending").GetInt64());
        Assert.Equal(4096, varz.GetProperty("max_control_line").GetInt32());

        // Go encodes time.Duration as integer nanoseconds and float-second timeouts as numbers.
        Assert.Equal(30_000_000_000L, varz.GetProperty("ping_interval").GetInt64());
        Assert.Equal(10_000_000_000L, varz.GetProperty("write_deadline").GetInt64());
        Assert.Equal(2, varz.GetProperty("ping_max").GetInt32());
        Assert.Equal(2.0, varz.GetProperty("auth_timeout").GetDouble());

        var start = DateTime.Parse(varz.GetProperty("start").GetString()!, CultureInfo.InvariantCulture, DateTimeStyles.RoundtripKind);
        var now = DateTime.Parse(varz.GetProperty("now").GetString()!, CultureInfo.InvariantCulture, DateTimeStyles.RoundtripKind);
        Assert.Equal(DateTimeKind.Utc, start.Kind);
        Assert.True(now >= start);
        Assert.Matches("^([0-9]+[ydhms])+$", varz.GetProperty("uptime").GetString());
        Assert.True(varz.GetProperty("mem").GetInt64() > 0);
        Assert.Equal(Environment.ProcessorCount, varz.GetProperty("cores").GetInt32());
        Assert.True(varz.GetProperty("cpu").GetDouble() >= 0);

        // Blocks of features that are not configured are empty objects, as nats-server writes them.
        foreach (var block in new[] { "cluster", "gateway", "leaf", "mqtt", "websocket", "jetstream" })
        {
            Assert.Equal(JsonValueKind.Object, varz.GetProperty(block).ValueKind);
        }

        Assert.False(varz.TryGetProperty("auth_required", out _));
        Assert.Equal(1, varz.GetProperty("http_req_stats").GetProperty("/varz").GetInt64());
    }

    [Fact(Timeout = 30_000)]
    public async Task Is_indented_with_two_spaces_like_go_marshal_indent()
    {
        await using var broker = await MonitoredBroker.StartAsync();
        var (_, body, response) = await broker.GetAsync("/varz");
        response.Dispose();
        Assert.StartsWith("{\n  \"server_id\": \"", body, StringComparison.Ordinal);
        Assert.DoesNotContain("\r", body, StringComparison.Ordinal);
        Assert.Contains("\n  \"cluster\": {},\n", body, StringComparison.Ordinal);
    }

    [Fact(Timeout = 30_000)]
    public async Task Counts_requests_per_endpoint()
    {
        await using var broker = await MonitoredBroker.StartAsync();
        await broker.GetJsonAsync("/connz");
        await broker.GetJsonAsync("/connz");
        await broker.GetJsonAsync("/subscriptionsz");
        var stats = (await broker.GetJsonAsync("/varz")).GetProperty("http_req_stats");
        Assert.Equal(2, stats.GetProperty("/connz").GetInt64());
        Assert.Equal(1, stats.GetProperty("/subsz").GetInt64());
        Assert.Equal(1, stats.GetProperty("/varz").GetInt64());
    }
}
