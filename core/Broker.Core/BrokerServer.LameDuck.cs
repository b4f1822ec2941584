using Broker.Core.Internal;
using Broker.Core.Internal.Clients;
using Broker.Core.Internal.Hosting;

namespace Broker.Core;

/// <summary>
/// Lame duck mode (nats-server's <c>lameDuckMode</c>, <c>--signal ldm</c>): stop accepting, tell clients, wait a grace
/// period, close the clients spread over the lame duck duration so they do not all reconnect elsewhere at once, stop.
/// </summary>
public sealed partial class BrokerServer
{
    // nats-server never waits more than a second between two closes, however few clients there are.
    private static readonly TimeSpan MaxCloseInterval = TimeSpan.FromSeconds(1);

    private static readonly TimeSpan MinCloseInterval = TimeSpan.FromMilliseconds(1);

    private readonly Lock lameDuckLock = new();
    private Task? lameDuck;

    /// <summary>Whether the broker is in lame duck mode.</summary>
    public bool IsLameDuckMode => core.RunState == BrokerRunState.LameDuck;

    /// <summary>
    /// Enters lame duck mode: stops accepting on every listener except monitoring (so /healthz can report it), sends
    /// <c>INFO {"ldm":true,...}</c> to clients that sent <c>protocol:1</c> in CONNECT, waits
    /// <see cref="BrokerOptions.LameDuckGracePeriod"/>, then closes the clients one by one over the rest of
    /// <see cref="BrokerOptions.LameDuckDuration"/> (at most a second apart), and finally stops the broker.
    /// Calling it again returns the same task; <see cref="StopAsync"/> during lame duck mode ends it early.
    /// </summary>
    /// <param name="cancellationToken">Cancels the waiting: the remaining clients are closed and the broker stops at once.</param>
    /// <returns>A task that completes when the broker has stopped.</returns>
    /// <exception cref="InvalidOperationException">The broker has not been started, or is still starting.</exception>
    public Task EnterLameDuckModeAsync(CancellationToken cancellationToken = default)
    {
        lock (lameDuckLock)
        {
            if (lameDuck is not null)
            {
                return lameDuck;
            }

            switch (core.RunState)
            {
                case BrokerRunState.Created or BrokerRunState.Starting:
                    throw new InvalidOperationException("The broker has not been started.");
                case BrokerRunState.Running:
                    core.SetRunState(BrokerRunState.LameDuck);
                    return lameDuck = RunLameDuckAsync(stopping.Token, cancellationToken);
                default:
                    return Stopped;
            }
        }
    }

    private async Task RunLameDuckAsync(CancellationToken stoppingToken, CancellationToken cancellationToken)
    {
        // Run the work outside the caller's lock and thread.
        await Task.Yield();
        HostingLog.EnteringLameDuckMode(logger);
        foreach (var host in listeners)
        {
            if (host.Definition.Name != MonitorListenerName)
            {
                await host.UnbindAsync().ConfigureAwait(false);
            }
        }

        // The cluster hears it first (nats-server's lameDuckMode sends the routes an INFO with ldm).
        core.Routes?.EnterLameDuckMode();

        // Nobody new can connect now: tell the clients that can hear it, then give them the grace period. Adapters'
        // connections are closed with the NATS ones.
        var clients = core.Clients.Values.OfType<IClientConnection>().OrderBy(c => c.Id).ToList();
        foreach (var client in clients.OfType<NatsClient>())
        {
            client.SendLameDuckInfo();
        }

        using var wait = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken, stoppingToken);
        try
        {
            if (clients.Count > 0)
            {
                var options = core.Options;
                await Task.Delay(options.LameDuckGracePeriod, wait.Token).ConfigureAwait(false);
                await CloseSpreadAsync(clients, options.LameDuckDuration - options.LameDuckGracePeriod, wait.Token).ConfigureAwait(false);
            }
        }
        catch (OperationCanceledException)
        {
            // Cancelled or stopped meanwhile: the stop below closes whoever is left.
        }

        await StopAsync(CancellationToken.None).ConfigureAwait(false);
        await Stopped.ConfigureAwait(false);
    }

    /// <summary>Closes the clients over <paramref name="duration"/>, each pause a random time between half and all of the interval.</summary>
    private async Task CloseSpreadAsync(List<IClientConnection> clients, TimeSpan duration, CancellationToken cancellationToken)
    {
        HostingLog.ClosingClients(logger, clients.Count, duration);
        var interval = duration / clients.Count;
        var batch = 1;
        if (interval < MinCloseInterval)
        {
            // More clients than milliseconds: close several per pause.
            batch = (int)Math.Ceiling(clients.Count / Math.Max(duration.TotalMilliseconds, 1));
            interval = MinCloseInterval;
        }
        else if (interval > MaxCloseInterval)
        {
            interval = MaxCloseInterval;
        }

        for (var i = 0; i < clients.Count; i++)
        {
            clients[i].CloseForShutdown();
            if (i == clients.Count - 1 || (i + 1) % batch != 0)
            {
                continue;
            }

            var pause = TimeSpan.FromTicks(Random.Shared.NextInt64(interval.Ticks / 2, interval.Ticks + 1));
            await Task.Delay(pause, cancellationToken).ConfigureAwait(false);
        }
    }
}
