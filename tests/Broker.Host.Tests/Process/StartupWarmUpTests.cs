using System.Text.Json;
using Broker.Abstractions;
using Broker.Core;
using Broker.Host.Hosting;
using Broker.TestKit;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging.Abstractions;

namespace Broker.Host.Tests.Process;

/// <summary>
/// The start-up warm-up (<see cref="StartupWarmUp"/>): it runs its messages through a private server to the end, and
/// nothing of it is visible on the real one: no connection, message, closed connection or connection id in /varz and
/// /connz, no trace line.
/// </summary>
public sealed class StartupWarmUpTests : IDisposable
{
    private static readonly TimeSpan ExitTimeout = TimeSpan.FromSeconds(15);

    private readonly HttpClient http = new() { Timeout = TimeSpan.FromSeconds(10) };

    public void Dispose() => http.Dispose();

    [Fact(Timeout = 30_000)]
    public async Task The_warm_up_delivers_every_message_to_its_subscriber()
    {
        Assert.Null(await StartupWarmUp.RunAsync());
    }

    [Fact(Timeout = 30_000)]
    public async Task The_broker_starts_its_plugins_services_beside_the_warm_up_and_accepts_only_after_it()
    {
        var warmUp = new TaskCompletionSource<string?>(TaskCreationOptions.RunContinuationsAsynchronously);
        var pluginService = new StartedService();
        await using var server = new BrokerServer(new BrokerOptions { Host = "127.0.0.1", Port = 0, NoSystemAccount = true });
        server.AddPlugin(new ServicePlugin(pluginService), new PluginManifest("Probe", new Version(1, 0), new Version(1, 0)));
        server.ConfigureServices(services => services.AddSingleton<IHostedService>(new StartupWarmUpGate(warmUp.Task, NullLogger.Instance)));

        var start = server.StartAsync();
        await pluginService.Started.Task.WaitAsync(TimeSpan.FromSeconds(10));
        await Task.Delay(200);
        Assert.False(start.IsCompleted, "the broker started before the warm-up ended");

        warmUp.SetResult(null);
        await start.WaitAsync(TimeSpan.FromSeconds(10));
        await using var client = await RawClient.ConnectAsync(server.ClientEndPoint);
        await client.SendAsync("CONNECT {\"verbose\":false}\r\n");
        Assert.Equal(["PONG"], (await client.PingAndCollectAsync()).Lines);
    }

    private sealed class StartedService : IHostedService
    {
        public TaskCompletionSource Started { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);

        public Task StartAsync(CancellationToken cancellationToken)
        {
            Started.TrySetResult();
            return Task.CompletedTask;
        }

        public Task StopAsync(CancellationToken cancellationToken) => Task.CompletedTask;
    }

    private sealed class ServicePlugin(StartedService service) : IBrokerPlugin
    {
        public void ConfigureServices(IServiceCollection services, PluginContext context) => services.AddSingleton<IHostedService>(service);
    }

    [Fact(Timeout = 90_000)]
    public async Task Monitoring_and_the_trace_show_nothing_of_the_warm_up()
    {
        await using var host = await HostProcess.StartReadyAsync(["-m", "-1", "-DV"]);
        var monitoring = new Uri($"http://{host.EndPoint("monitor")}");

        var before = await Harness.GetJsonAsync(http, monitoring, "/varz");
        Assert.Equal(0, before.GetProperty("in_msgs").GetInt64());
        Assert.Equal(0, before.GetProperty("in_bytes").GetInt64());
        Assert.Equal(0, before.GetProperty("out_msgs").GetInt64());
        Assert.Equal(0, before.GetProperty("connections").GetInt32());
        var closedBefore = await Harness.GetJsonAsync(http, monitoring, "/connz?state=closed");
        Assert.Equal(0, closedBefore.GetProperty("total").GetInt32());

        await using (var client = await RawClient.ConnectAsync(host.EndPoint("client")))
        {
            await client.SendAsync("CONNECT {\"verbose\":false,\"name\":\"first\"}\r\nPUB a 5\r\nhello\r\nPUB a 5\r\nhello\r\n");
            Assert.Equal(["PONG"], (await client.PingAndCollectAsync()).Lines);
            var open = await Harness.GetJsonAsync(http, monitoring, "/connz");
            var first = Assert.Single(open.GetProperty("connections").EnumerateArray());
            Assert.Equal("first", first.GetProperty("name").GetString());
            Assert.Equal(FirstClientId, first.GetProperty("cid").GetUInt64());
        }

        var varz = await WaitForClosedAsync(monitoring);
        Assert.Equal(2, varz.GetProperty("in_msgs").GetInt64());
        Assert.Equal(10, varz.GetProperty("in_bytes").GetInt64());
        Assert.Equal(0, varz.GetProperty("out_msgs").GetInt64());
        Assert.Equal(before.GetProperty("total_connections").GetInt64() + 1, varz.GetProperty("total_connections").GetInt64());
        var closed = await Harness.GetJsonAsync(http, monitoring, "/connz?state=closed");
        Assert.Equal("first", Assert.Single(closed.GetProperty("connections").EnumerateArray()).GetProperty("name").GetString());
        Assert.DoesNotContain(host.Lines, l => l.Contains("_WARMUP", StringComparison.Ordinal));

        await host.SignalAsync("TERM");
        Assert.Equal(0, await host.WaitForExitAsync(ExitTimeout));
    }

    // The system account's internal client takes id 1 at start; the first client connecting from outside is the next.
    private const ulong FirstClientId = 2;

    private async Task<JsonElement> WaitForClosedAsync(Uri monitoring)
    {
        while (true)
        {
            var varz = await Harness.GetJsonAsync(http, monitoring, "/varz");
            if (varz.GetProperty("connections").GetInt32() == 0)
            {
                return varz;
            }

            await Task.Delay(20);
        }
    }
}
