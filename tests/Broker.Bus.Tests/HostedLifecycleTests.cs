using Broker.Abstractions;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;

namespace Broker.Bus.Tests;

/// <summary>
/// Plugins' hosted services go through <see cref="IHostedLifecycleService"/>'s phases as Microsoft's host runs them:
/// every service's StartingAsync before any StartAsync, and every StoppingAsync before any StopAsync, so a service
/// registered first (the MQTT adapter) can finish its JetStream writes before a service registered after it (the
/// engine) stops.
/// </summary>
public sealed class HostedLifecycleTests
{
    [Fact(Timeout = 60_000)]
    public async Task Every_stopping_phase_runs_before_any_stop_and_starting_before_any_start()
    {
        var calls = new List<string>();
        var first = new Recorder("first", calls);
        var second = new Recorder("second", calls);
        await using (var broker = await TestBroker.StartAsync(options => options.Port = 0, [first, second]))
        {
            Assert.Equal(["first starting", "second starting", "first start", "second start", "first started", "second started"], calls);
            calls.Clear();
        }

        Assert.Equal(["second stopping", "first stopping", "second stop", "first stop", "second stopped", "first stopped"], calls);
    }

    private sealed class Recorder(string name, List<string> calls) : IBrokerPlugin, IHostedLifecycleService
    {
        public void ConfigureServices(IServiceCollection services, PluginContext context) => services.AddSingleton<IHostedService>(this);

        public Task StartingAsync(CancellationToken cancellationToken) => Record("starting");

        public Task StartAsync(CancellationToken cancellationToken) => Record("start");

        public Task StartedAsync(CancellationToken cancellationToken) => Record("started");

        public Task StoppingAsync(CancellationToken cancellationToken) => Record("stopping");

        public Task StopAsync(CancellationToken cancellationToken) => Record("stop");

        public Task StoppedAsync(CancellationToken cancellationToken) => Record("stopped");

        private Task Record(string phase)
        {
            lock (calls)
            {
                calls.Add(name + " " + phase);
            }

            return Task.CompletedTask;
        }
    }
}
