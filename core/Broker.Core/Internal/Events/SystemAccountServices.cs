using System.Buffers;
using Broker.Abstractions;
using Broker.Core.Internal.Clients;
using Broker.Core.Internal.Monitoring;
using Broker.Core.Internal.Monitoring.Metrics;
using Microsoft.Extensions.Logging;

namespace Broker.Core.Internal.Events;

/// <summary>
/// The system account's services for the broker's life: one in-process client bound to the system account, which
/// answers the <c>$SYS.REQ</c> requests (<see cref="SystemRequests"/>) and publishes the events
/// (<see cref="SystemEvents"/>), as nats-server's internal system client does. Started once the plugins' monitoring
/// pages are known (JetStream's /jsz answers JSZ), before clients are accepted; stopped first when the broker stops,
/// after publishing SHUTDOWN, as nats-server's <c>Shutdown</c> does.
/// </summary>
internal sealed class SystemAccountServices : IAsyncDisposable
{
    // How long a stop waits for queued events to be published.
    private static readonly TimeSpan DrainTimeout = TimeSpan.FromSeconds(2);

    private readonly BrokerCore core;
    private readonly InProcessClient client;
    private readonly SystemPublisher publisher;
    private readonly SystemEvents events;
    private readonly List<IBusSubscription> subscriptions;
    private readonly CancellationTokenSource stopping = new();
    private readonly Task eventLoop;
    private readonly Task statszLoop;
    private readonly ClaimsRequests? claims;

    private SystemAccountServices(BrokerCore core, Accounts.Account system, BrokerMetrics metrics, IMonitoringEndpoint? jsz, ILogger logger)
    {
        this.core = core;
        client = new InProcessClient(core, new BusClientOptions { Name = "$SYS", Echo = false }, system) { IsSystemClient = true };
        var endpoints = new MonitorEndpoints(core, metrics, logger);
        publisher = new SystemPublisher(client, new SystemServerInfo(core), core);
        events = new SystemEvents(core, publisher, endpoints);
        subscriptions = new SystemRequests(core, endpoints, publisher, events, jsz).Subscribe(client);
        if (core.JwtAccounts is { } jwtAccounts)
        {
            // Operator mode: the account resolver's claims requests (ClaimsRequests).
            claims = new ClaimsRequests(jwtAccounts, client, publisher.Server, logger);
            subscriptions.AddRange(claims.Subscribe());
        }
        eventLoop = Task.Run(() => events.RunAsync(stopping.Token));
        statszLoop = Task.Run(() => events.RunStatszAsync(TimeProvider.System, stopping.Token));
        core.Events = events;
    }

    /// <summary>Starts the services when the broker has a system account; otherwise null.</summary>
    public static SystemAccountServices? Start(BrokerCore core, BrokerMetrics metrics, IEnumerable<IMonitoringEndpoint> pages, ILogger logger)
    {
        if (core.Accounts.System is not { } system)
        {
            return null;
        }

        var jsz = pages.FirstOrDefault(p => p.Path == "/jsz");
        return new SystemAccountServices(core, system, metrics, jsz, logger);
    }

    /// <summary>Events dropped because the queue was full.</summary>
    public long DroppedEvents => events.Dropped;

    /// <summary>Publishes SHUTDOWN after what is queued, stops the loops and closes the client.</summary>
    public async Task StopAsync()
    {
        core.Events = null;
        await stopping.CancelAsync().ConfigureAwait(false);
        await statszLoop.ConfigureAwait(false);
        try
        {
            await eventLoop.WaitAsync(DrainTimeout).ConfigureAwait(false);
        }
        catch (TimeoutException)
        {
        }

        publisher.Publish(new ShutdownEvent(core.ServerId), new ArrayBufferWriter<byte>(256));
        try
        {
            await client.FlushAsync().AsTask().WaitAsync(DrainTimeout).ConfigureAwait(false);
        }
        catch (TimeoutException)
        {
        }

        foreach (var subscription in subscriptions)
        {
            subscription.Dispose();
        }

        if (claims is not null)
        {
            // A claims request under way finishes (and answers) before the client closes.
            try
            {
                await claims.DrainAsync().WaitAsync(DrainTimeout).ConfigureAwait(false);
            }
            catch (TimeoutException)
            {
            }
        }

        await DisposeAsync().ConfigureAwait(false);
    }

    /// <summary>Closes the client (after <see cref="StopAsync"/>, or alone when the start failed).</summary>
    public async ValueTask DisposeAsync()
    {
        core.Events = null;
        await client.DisposeAsync().ConfigureAwait(false);
        stopping.Dispose();
    }
}
