using System.Net;
using System.Net.Sockets;
using Broker.Abstractions;
using Broker.Core.Internal;
using Broker.Core.Internal.Hosting;
using Broker.Core.Internal.Monitoring;
using Broker.Core.Internal.Monitoring.Metrics;
using Broker.Core.Internal.Transport;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;

namespace Broker.Core;

/// <summary>Starting and stopping: composing services, binding listeners, running hosted services.</summary>
public sealed partial class BrokerServer
{
    // How long a stop waits for connections to finish closing before it moves on.
    private static readonly TimeSpan DrainTimeout = TimeSpan.FromSeconds(5);

    private readonly List<ListenerHost> listeners = [];
    private readonly CancellationTokenSource stopping = new();
    private readonly TaskCompletionSource stopped = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private ServiceProvider? services;
    private BrokerMetrics? metrics;
    private MonitorRouter? monitorRouter;
    private Internal.Events.SystemAccountServices? systemServices;

    /// <summary>
    /// Completes once the broker has stopped, whether through <see cref="StopAsync"/>, <see cref="DisposeAsync"/> or
    /// the end of lame duck mode; a host waits on it to know when to exit.
    /// </summary>
    public Task Stopped => stopped.Task;

    /// <summary>
    /// Composes the plugins' services, lets every <see cref="IListenerConfigurator"/> adjust the listener definitions,
    /// binds every listener (the NATS client port and the plugins' ports), starts hosted services, then starts
    /// accepting connections.
    /// </summary>
    /// <param name="cancellationToken">Cancels the start.</param>
    /// <returns>A task that completes when the broker accepts connections.</returns>
    /// <exception cref="InvalidOperationException">Started twice, or a listener refers to an unknown protocol, transport or middleware.</exception>
    /// <exception cref="System.Net.Sockets.SocketException">A port could not be bound (logged first, as nats-server logs it: <c>Error listening on port: ...</c>).</exception>
    public async Task StartAsync(CancellationToken cancellationToken = default)
    {
        if (Interlocked.CompareExchange(ref state, 1, 0) != 0)
        {
            throw new InvalidOperationException("The broker has already been started.");
        }

        HostingLog.Starting(logger, Version, CompatibleNatsServerVersion, core.ServerId);
        core.SetRunState(BrokerRunState.Starting);
        try
        {
            metrics = new BrokerMetrics(core);
            services = ComposeServices(metrics);
            await BindListenersAsync(services, cancellationToken).ConfigureAwait(false);
            core.Listeners = [.. listeners];
            var client = ClientEndPoint;
            monitorRouter?.AddEndpoints(services.GetServices<IMonitoringEndpoint>());
            var features = services.GetServices<ServerFeature>().ToArray();
            var jetStream = features.Any(f => f.Name == ServerFeature.JetStream);
            var domain = jetStream ? features.FirstOrDefault(f => f.Name == ServerFeature.JetStreamDomain)?.Value : null;
            core.ConfigureInfo(core.Options.Host, client.Port, Version, jetStream, domain);
            systemServices = Internal.Events.SystemAccountServices.Start(
                core, metrics, services.GetServices<IMonitoringEndpoint>(), loggerFactory.CreateLogger("Broker.System"));

            await hostedServices.StartAsync(services.GetServices<IHostedService>(), cancellationToken).ConfigureAwait(false);

            if (core.Routes is { } routes)
            {
                // The configured members are tried before clients are accepted, so their first INFO lists the cluster.
                await routes.StartAsync(RouteFirstAttempts).ConfigureAwait(false);
            }

            foreach (var host in listeners)
            {
                host.Start(stopping.Token);
                HostingLog.Listening(logger, host.Definition.Protocol, host.EndPoint.ToString() ?? "?", host.Definition.Name);
            }

            core.LeafNodes?.Start();
            core.SetRunState(BrokerRunState.Running);
            HostingLog.Ready(logger);
        }
        catch
        {
            await StopAsync(CancellationToken.None).ConfigureAwait(false);
            throw;
        }
    }

    // How long the start waits for the configured routes' first attempts.
    private static readonly TimeSpan RouteFirstAttempts = TimeSpan.FromSeconds(1);

    /// <summary>
    /// Stops accepting, closes every client connection, waits for them (up to 5 seconds), then stops hosted services.
    /// Ends lame duck mode early if it is in progress. <see cref="Stopped"/> completes when it is done.
    /// </summary>
    /// <param name="cancellationToken">Cancels waiting for hosted services to stop.</param>
    /// <returns>A task that completes when the broker has stopped.</returns>
    public async Task StopAsync(CancellationToken cancellationToken = default)
    {
        if (Interlocked.Exchange(ref state, 2) == 2)
        {
            return;
        }

        HostingLog.Stopping(logger);
        core.SetRunState(BrokerRunState.Stopping);
        if (systemServices is not null)
        {
            // SHUTDOWN first, while clients are still connected to receive it (nats-server's Shutdown order).
            await systemServices.StopAsync().ConfigureAwait(false);
        }

        if (core.LeafNodes is { } leafNodes)
        {
            await leafNodes.StopAsync().ConfigureAwait(false);
        }

        if (core.Routes is { } routes)
        {
            await routes.StopAsync().ConfigureAwait(false);
        }

        foreach (var host in listeners)
        {
            await host.UnbindAsync().ConfigureAwait(false);
        }

        await stopping.CancelAsync().ConfigureAwait(false);
        await Task.WhenAll(listeners.Select(l => l.DrainAsync(DrainTimeout))).ConfigureAwait(false);

        // Adapters close their connections when their listener stops; any they kept are closed for them.
        foreach (var adapterConnection in core.Clients.Values.OfType<Internal.Clients.BusConnection>())
        {
            adapterConnection.CloseForShutdown();
        }

        // Every service's StoppingAsync before any StopAsync: an adapter finishes its writes into JetStream first.
        await hostedServices.StopAsync(cancellationToken).ConfigureAwait(false);

        if (services is not null)
        {
            await services.DisposeAsync().ConfigureAwait(false);
        }

        metrics?.Dispose();
        core.JwtAccounts?.Dispose();
        core.AuthCallout?.Dispose();
        core.SetRunState(BrokerRunState.Stopped);
        stopped.TrySetResult();
    }

    /// <summary>Stops the broker (see <see cref="StopAsync"/>).</summary>
    /// <returns>A task that completes when the broker has stopped.</returns>
    public async ValueTask DisposeAsync()
    {
        await StopAsync().ConfigureAwait(false);

        // Lame duck mode ends right after a stop; let it finish before its cancellation source goes away.
        Task? pendingLameDuck;
        lock (lameDuckLock)
        {
            pendingLameDuck = lameDuck;
        }

        if (pendingLameDuck is not null)
        {
            await pendingLameDuck.ConfigureAwait(false);
        }

        stopping.Dispose();
        reloadGate.Dispose();
    }

    private ServiceProvider ComposeServices(BrokerMetrics brokerMetrics)
    {
        var collection = new ServiceCollection();
        collection.AddSingleton(loggerFactory);
        collection.AddSingleton(typeof(ILogger<>), typeof(Logger<>));
        collection.AddSingleton(Bus);
        collection.AddSingleton((ISubjectInterest)Bus);
        collection.AddSingleton<IAccountDirectory>(accountDirectory);
        collection.AddSingleton(new Abstractions.ServerIdentity(core.ServerId, core.ServerName));
        collection.AddSingleton<IConnectionListenerFactory>(new SocketTransportFactory());
        collection.AddSingleton<IProtocolHandler>(new NatsProtocolHandler(core));
        var options = core.Options;
        collection.AddSingleton(new ListenerDefinition
        {
            Name = ClientListenerName,
            EndPoint = new IPEndPoint(ParseHost(options.Host), options.Port),
            Protocol = NatsProtocolHandler.ProtocolName,
        });
        AddMonitoring(collection, options.Monitoring, brokerMetrics);

        foreach (var (plugin, manifest) in plugins)
        {
            plugin.ConfigureServices(collection, new PluginContext(manifest, configuration.GetSection("Plugins:" + manifest.Id)));
            HostingLog.PluginConfigured(logger, manifest.Id, manifest.Version.ToString());
        }

        foreach (var configure in serviceConfigurations)
        {
            configure(collection);
        }

        return collection.BuildServiceProvider(new ServiceProviderOptions { ValidateOnBuild = true });
    }

    private async Task BindListenersAsync(IServiceProvider provider, CancellationToken cancellationToken)
    {
        var factories = provider.GetServices<IConnectionListenerFactory>().ToDictionary(f => f.Name, StringComparer.Ordinal);
        var handlers = provider.GetServices<IProtocolHandler>().ToDictionary(h => h.Protocol, StringComparer.Ordinal);
        var middleware = provider.GetServices<IConnectionMiddleware>().ToDictionary(m => m.Name, StringComparer.Ordinal);
        var options = core.Options;
        var settings = new TransportSettings
        {
            MaxPendingOutputBytes = options.MaxPending,
            WriteDeadline = options.WriteDeadline,

            // Segments a closed connection gives back serve the others (a slow-consumer storm; OutputSegmentPool).
            OutputPool = OutputSegmentPool.Default,
        };

        var configurators = provider.GetServices<IListenerConfigurator>().ToArray();
        var seen = new HashSet<string>(StringComparer.Ordinal);
        foreach (var registered in provider.GetServices<ListenerDefinition>())
        {
            var definition = registered;
            foreach (var configurator in configurators)
            {
                definition = configurator.Configure(definition);
            }

            if (!seen.Add(definition.Name))
            {
                throw new InvalidOperationException($"Two listeners are named '{definition.Name}'.");
            }

            if (!factories.TryGetValue(definition.Transport, out var factory))
            {
                throw new InvalidOperationException($"Listener '{definition.Name}' needs transport '{definition.Transport}', which no plugin provides.");
            }

            if (!handlers.TryGetValue(definition.Protocol, out var handler))
            {
                throw new InvalidOperationException($"Listener '{definition.Name}' needs protocol '{definition.Protocol}', which no plugin provides.");
            }

            var steps = definition.Middleware.Select(name => middleware.TryGetValue(name, out var step)
                ? step
                : throw new InvalidOperationException($"Listener '{definition.Name}' needs middleware '{name}', which no plugin provides.")).ToArray();

            IConnectionListener listener;
            try
            {
                listener = await factory.BindAsync(definition.EndPoint, settings, cancellationToken).ConfigureAwait(false);
            }
            catch (SocketException ex)
            {
                HostingLog.ListenFailed(logger, ListenFailure(definition, ex));
                throw;
            }

            listeners.Add(new ListenerHost(definition, listener, handler, steps, loggerFactory.CreateLogger("Broker.Listener")));
        }
    }

    /// <summary>
    /// nats-server's fatal line for a listener it cannot bind, with Go's error text: <c>Error listening on port:
    /// 0.0.0.0:4222, "listen tcp 0.0.0.0:4222: bind: address already in use"</c> for clients, <c>Can't start monitoring:
    /// can't listen to the monitor port: listen tcp ...</c> for monitoring, <c>Unable to listen for websocket
    /// connections: listen tcp ...</c> for a plugin's listener.
    /// </summary>
    private static string ListenFailure(ListenerDefinition definition, SocketException exception)
    {
        var address = definition.EndPoint.ToString() ?? "?";

        // Go's syscall errors are strerror in lower case ("address already in use", "permission denied").
        var reason = exception.Message.Length > 0 ? char.ToLowerInvariant(exception.Message[0]) + exception.Message[1..] : exception.SocketErrorCode.ToString();
        var error = $"listen tcp {address}: bind: {reason}";
        return definition.Name switch
        {
            ClientListenerName => $"Error listening on port: {address}, \"{error}\"",
            MonitorListenerName => $"Can't start monitoring: can't listen to the monitor port: {error}",
            var name => $"Unable to listen for {name} connections: {error}",
        };
    }

    /// <summary>The monitoring listener and its protocol handler, when a monitoring port is configured.</summary>
    private void AddMonitoring(ServiceCollection collection, MonitoringOptions monitoring, BrokerMetrics brokerMetrics)
    {
        if (monitoring.Port is not { } port)
        {
            return;
        }

        var monitorLogger = loggerFactory.CreateLogger("Broker.Monitor");
        var endpoints = new MonitorEndpoints(core, brokerMetrics, monitorLogger);
        var router = monitorRouter = new MonitorRouter(endpoints, monitoring.NormalizedBasePath, brokerMetrics.HttpRequests, monitorLogger);
        collection.AddSingleton<IProtocolHandler>(new MonitorProtocolHandler(router, monitoring, monitorLogger));
        collection.AddSingleton(new ListenerDefinition
        {
            Name = MonitorListenerName,
            EndPoint = new IPEndPoint(ParseHost(monitoring.Host), port),
            Protocol = MonitorProtocolHandler.ProtocolName,
            Transport = SocketTransportFactory.TransportName,
            Middleware = [.. monitoring.Middleware],
        });
    }

    private static IPAddress ParseHost(string host)
    {
        if (IPAddress.TryParse(host, out var address))
        {
            return address;
        }

        if (string.Equals(host, "localhost", StringComparison.OrdinalIgnoreCase))
        {
            return IPAddress.Loopback;
        }

        var resolved = Dns.GetHostAddresses(host);
        return resolved.Length > 0 ? resolved[0] : throw new InvalidOperationException($"host: cannot resolve '{host}'");
    }
}
