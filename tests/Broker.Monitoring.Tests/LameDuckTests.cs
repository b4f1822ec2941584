using System.Net;
using System.Net.Sockets;
using Broker.TestKit;

namespace Broker.Monitoring.Tests;

/// <summary>
/// Lame duck mode: listeners stop accepting, protocol-1 clients get INFO with ldm, /healthz turns 503, then every
/// client is closed and the broker stops.
/// </summary>
public sealed class LameDuckTests
{
    [Fact(Timeout = 30_000)]
    public async Task Tells_protocol_1_clients_closes_everyone_and_stops()
    {
        await using var broker = await MonitoredBroker.StartAsync(options =>
        {
            options.LameDuckGracePeriod = TimeSpan.FromMilliseconds(500);
            options.LameDuckDuration = TimeSpan.FromMilliseconds(1500);
        });
        await using var modern = await broker.ConnectAsync("{\"verbose\":false,\"protocol\":1}");
        await using var legacy = await broker.ConnectAsync("{\"verbose\":false,\"protocol\":0}");
        var clientEndPoint = broker.Broker.EndPoint;

        var lameDuck = broker.Server.EnterLameDuckModeAsync();
        Assert.Same(lameDuck, broker.Server.EnterLameDuckModeAsync());
        Assert.True(broker.Server.IsLameDuckMode);

        var info = await modern.ReadLineAsync();
        Assert.StartsWith("INFO {", info, StringComparison.Ordinal);
        Assert.Contains("\"ldm\":true", info, StringComparison.Ordinal);
        Assert.Contains("\"server_id\":\"" + broker.Server.ServerId + "\"", info, StringComparison.Ordinal);

        // The client port no longer accepts; the monitor still answers, and reports the broker as not ready.
        await Assert.ThrowsAnyAsync<SocketException>(() => RawClient.ConnectAsync(clientEndPoint));
        var (status, body, response) = await broker.GetAsync("/healthz");
        response.Dispose();
        Assert.Equal(HttpStatusCode.ServiceUnavailable, status);
        Assert.Equal("{\"status\":\"error\",\"error\":\"failed to be ready for connections: lame duck mode\"}", body);
        var metrics = (await broker.GetAsync("/metrics")).Body;
        Assert.Contains("broker_lame_duck 1\n", metrics, StringComparison.Ordinal);
        Assert.Contains("broker_listener_up{listener=\"client\"", metrics, StringComparison.Ordinal);

        // Closed after the grace period, without -ERR; the protocol-0 client never saw an INFO.
        Assert.Empty(await modern.ExpectClosedAsync(TimeSpan.FromSeconds(10)));
        Assert.Empty(await legacy.ExpectClosedAsync(TimeSpan.FromSeconds(10)));
        await lameDuck.WaitAsync(TimeSpan.FromSeconds(10));
        Assert.True(broker.Server.Stopped.IsCompleted);
        Assert.True(broker.Broker.Logs.Contains("Entering lame duck mode"));
    }

    [Fact(Timeout = 30_000)]
    public async Task Closed_clients_are_recorded_with_server_shutdown_as_reason()
    {
        await using var broker = await MonitoredBroker.StartAsync(options =>
        {
            options.LameDuckGracePeriod = TimeSpan.FromMilliseconds(100);
            options.LameDuckDuration = TimeSpan.FromMinutes(1);
        });
        await using var first = await broker.ConnectAsync("{\"verbose\":false,\"name\":\"first\"}");
        await using var second = await broker.ConnectAsync("{\"verbose\":false,\"name\":\"second\"}");
        var lameDuck = broker.Server.EnterLameDuckModeAsync();

        // With two clients over a minute the pause between closes is capped at one second: the first is closed well
        // before the second, and /connz (still served) shows why.
        await first.ExpectClosedAsync(TimeSpan.FromSeconds(10));
        await Eventually.AssertAsync(
            async () => (await broker.GetJsonAsync("/connz?state=closed")).GetProperty("num_connections").GetInt32() >= 1,
            "the first close to be recorded");
        var closed = (await broker.GetJsonAsync("/connz?state=closed")).GetProperty("connections")[0];
        Assert.Equal("first", closed.GetProperty("name").GetString());
        Assert.Equal("Server Shutdown", closed.GetProperty("reason").GetString());

        await second.ExpectClosedAsync(TimeSpan.FromSeconds(10));
        await lameDuck.WaitAsync(TimeSpan.FromSeconds(10));
    }

    [Fact(Timeout = 30_000)]
    public async Task Without_clients_it_stops_at_once_and_stop_ends_it_early()
    {
        await using (var idle = await MonitoredBroker.StartAsync())
        {
            await idle.Server.EnterLameDuckModeAsync().WaitAsync(TimeSpan.FromSeconds(10));
            Assert.True(idle.Server.Stopped.IsCompleted);
        }

        await using var busy = await MonitoredBroker.StartAsync();
        await using var client = await busy.ConnectAsync();
        var lameDuck = busy.Server.EnterLameDuckModeAsync();

        // The default grace period is 10 s; stopping does not wait for it.
        await busy.Server.StopAsync().WaitAsync(TimeSpan.FromSeconds(10));
        await lameDuck.WaitAsync(TimeSpan.FromSeconds(10));
        await client.ExpectClosedAsync();
    }

    [Fact(Timeout = 30_000)]
    public async Task Cancelling_skips_the_wait_and_stops()
    {
        await using var broker = await MonitoredBroker.StartAsync();
        await using var client = await broker.ConnectAsync();
        using var cancel = new CancellationTokenSource();
        var lameDuck = broker.Server.EnterLameDuckModeAsync(cancel.Token);
        await cancel.CancelAsync();
        await lameDuck.WaitAsync(TimeSpan.FromSeconds(10));
        await client.ExpectClosedAsync();
        Assert.True(broker.Server.Stopped.IsCompleted);
    }

    [Fact]
    public void Grace_period_must_be_shorter_than_the_duration()
    {
        var options = new Broker.Core.BrokerOptions { LameDuckDuration = TimeSpan.FromSeconds(5), LameDuckGracePeriod = TimeSpan.FromSeconds(10) };
        var error = Assert.Throws<InvalidOperationException>(options.Validate);
        Assert.Equal("lame duck grace period (10s) should be strictly lower than lame duck duration (5s)", error.Message);
    }

    [Fact(Timeout = 30_000)]
    public async Task Not_started_is_refused()
    {
        await using var server = new Broker.Core.BrokerServer(new Broker.Core.BrokerOptions { Host = "127.0.0.1", Port = 0 });
        await Assert.ThrowsAsync<InvalidOperationException>(() => server.EnterLameDuckModeAsync());
    }
}
