using Broker.Host.Logging;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;

namespace Broker.Host.Hosting;

/// <summary>
/// The broker's last hosted service: waits for the start-up warm-up (<see cref="StartupWarmUp"/>) to end. The broker
/// starts its hosted services in order before its listeners accept, so the warm-up runs beside the real server's own
/// start (services composed, listeners bound, JetStream's streams restored) and is over, its private port closed,
/// before the first client is accepted.
/// </summary>
/// <param name="warmUp">The running warm-up: <see langword="null"/> when it ran, or why it did not finish.</param>
/// <param name="logger">Where a skipped warm-up is logged (debug).</param>
internal sealed class StartupWarmUpGate(Task<string?> warmUp, ILogger logger) : IHostedService
{
    /// <summary>Waits for the warm-up; one debug line when it did not finish.</summary>
    /// <param name="cancellationToken">Not used: the warm-up has its own time limit.</param>
    /// <returns>A task that completes when the warm-up has ended.</returns>
    public async Task StartAsync(CancellationToken cancellationToken)
    {
        if (await warmUp.ConfigureAwait(false) is { } skipped)
        {
            HostLog.WarmUpSkipped(logger, skipped);
        }
    }

    /// <summary>Nothing to stop.</summary>
    /// <param name="cancellationToken">Not used.</param>
    /// <returns>A completed task.</returns>
    public Task StopAsync(CancellationToken cancellationToken) => Task.CompletedTask;
}
