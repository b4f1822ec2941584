using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;

namespace Broker.Core.Internal.Hosting;

/// <summary>
/// The plugins' hosted services of a running broker, started and stopped through <see cref="IHostedLifecycleService"/>'s
/// phases as Microsoft's host runs them: every StartingAsync, every StartAsync, every StartedAsync in registration
/// order; every StoppingAsync, every StopAsync, every StoppedAsync last started first. A service registered before
/// another (the MQTT adapter before the JetStream engine) can so finish what it writes into the other while stopping.
/// </summary>
internal sealed class HostedServiceSet(ILogger logger)
{
    private readonly List<IHostedService> started = [];

    /// <summary>Starts <paramref name="services"/>; those started before a failure are stopped by <see cref="StopAsync"/>.</summary>
    public async Task StartAsync(IEnumerable<IHostedService> services, CancellationToken cancellationToken)
    {
        var all = services.ToArray();
        foreach (var lifecycle in all.OfType<IHostedLifecycleService>())
        {
            await lifecycle.StartingAsync(cancellationToken).ConfigureAwait(false);
        }

        foreach (var service in all)
        {
            await service.StartAsync(cancellationToken).ConfigureAwait(false);
            started.Add(service);
        }

        foreach (var lifecycle in all.OfType<IHostedLifecycleService>())
        {
            await lifecycle.StartedAsync(cancellationToken).ConfigureAwait(false);
        }
    }

    /// <summary>Stops the started services; a failure is logged and the rest go on.</summary>
    public async Task StopAsync(CancellationToken cancellationToken)
    {
        await EachAsync(static (service, token) => service is IHostedLifecycleService lifecycle ? lifecycle.StoppingAsync(token) : Task.CompletedTask, cancellationToken).ConfigureAwait(false);
        await EachAsync(static (service, token) => service.StopAsync(token), cancellationToken).ConfigureAwait(false);
        await EachAsync(static (service, token) => service is IHostedLifecycleService lifecycle ? lifecycle.StoppedAsync(token) : Task.CompletedTask, cancellationToken).ConfigureAwait(false);
    }

    private async Task EachAsync(Func<IHostedService, CancellationToken, Task> phase, CancellationToken cancellationToken)
    {
        for (var i = started.Count - 1; i >= 0; i--)
        {
            try
            {
                await phase(started[i], cancellationToken).ConfigureAwait(false);
            }
#pragma warning disable CA1031 // Stop the remaining services even when one fails.
            catch (Exception ex)
#pragma warning restore CA1031
            {
                HostingLog.ServiceStopFailed(logger, started[i].GetType().Name, ex);
            }
        }
    }
}
