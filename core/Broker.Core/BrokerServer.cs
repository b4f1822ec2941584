using System.Net;
using Broker.Abstractions;
using Broker.Core.Internal;
using Broker.Core.Internal.Hosting;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Logging.Abstractions;

namespace Broker.Core;

/// <summary>
/// A NATS-compatible broker. Create it with options, add plugins as instances, start it, and read the bound
/// endpoints; the host executable and in-process embedding (tests, edge applications) both use this class.
/// </summary>
/// <example>
/// <code>
/// await using var server = new BrokerServer(new BrokerOptions { Host = "127.0.0.1", Port = 0 });
/// await server.StartAsync();
/// var url = server.ClientUrl; // nats://127.0.0.1:54321
/// </code>
/// </example>
public sealed partial class BrokerServer : IAsyncDisposable
{
    private readonly List<(IBrokerPlugin Plugin, PluginManifest Manifest)> plugins = [];
    private readonly List<Action<Microsoft.Extensions.DependencyInjection.IServiceCollection>> serviceConfigurations = [];
    private readonly ILoggerFactory loggerFactory;
    private readonly ILogger logger;
    private readonly HostedServiceSet hostedServices;
    private readonly IConfiguration configuration;
    private readonly BrokerCore core;
    private readonly AccountDirectory accountDirectory;
    private int state;

    /// <summary>Creates a broker; nothing listens until <see cref="StartAsync"/>.</summary>
    /// <param name="options">The settings; copied, so later changes to the instance have no effect.</param>
    /// <param name="loggerFactory">Where the broker logs; nowhere when <see langword="null"/>.</param>
    /// <param name="configuration">
    /// Configuration whose <c>Plugins:&lt;Id&gt;</c> sections are handed to plugins; empty when <see langword="null"/>.
    /// </param>
    /// <exception cref="InvalidOperationException">The options are not valid (see <see cref="BrokerOptions.Validate"/>).</exception>
    public BrokerServer(BrokerOptions options, ILoggerFactory? loggerFactory = null, IConfiguration? configuration = null)
    {
        ArgumentNullException.ThrowIfNull(options);
        var copy = options.Clone();
        copy.Validate();
        this.loggerFactory = loggerFactory ?? NullLoggerFactory.Instance;
        this.configuration = configuration ?? new ConfigurationBuilder().Build();
        logger = this.loggerFactory.CreateLogger("Broker.Server");
        hostedServices = new HostedServiceSet(logger);
        core = new BrokerCore(copy, this.loggerFactory);
        Bus = new MessageBus(core);
        accountDirectory = new AccountDirectory(core.Accounts, logger, stopping.Token);
    }

    /// <summary>The product version (the host's <c>-v</c> prints it beside the nats-server version we match).</summary>
    public static string Version { get; } = typeof(BrokerServer).Assembly.GetName().Version?.ToString(3) ?? "0.0.0";

    /// <summary>The nats-server release whose client protocol this broker matches; INFO reports it as <c>version</c>.</summary>
    public static string CompatibleNatsServerVersion => Internal.Protocol.ServerInfo.CompatibleServerVersion;

    /// <summary>The server id reported in INFO (56 characters, nats-server style).</summary>
    public string ServerId => core.ServerId;

    /// <summary>The in-process messaging entry point, usable once the broker has started.</summary>
    public IMessageBus Bus { get; }

    /// <summary>The broker's services (plugins' registrations included); available after <see cref="StartAsync"/>.</summary>
    public IServiceProvider Services => services ?? throw new InvalidOperationException("The broker has not been started.");

    /// <summary>The bound NATS client endpoint (with the real port when port 0 was configured).</summary>
    /// <exception cref="InvalidOperationException">The broker has not been started.</exception>
    public IPEndPoint ClientEndPoint => (IPEndPoint)GetEndPoint(ClientListenerName);

    /// <summary>The client URL, <c>nats://host:port</c>, with a loopback host when bound to all interfaces.</summary>
    public string ClientUrl => FormatUrl("nats", ClientEndPoint);

    /// <summary>The name of the NATS client listener.</summary>
    public const string ClientListenerName = "client";

    /// <summary>The name of the HTTP monitoring listener (present when <see cref="MonitoringOptions.Port"/> is set).</summary>
    public const string MonitorListenerName = "monitor";

    /// <summary>
    /// The name of the <see cref="System.Diagnostics.Metrics.Meter"/> the broker publishes its metrics on (connections,
    /// messages, bytes, slow consumers, ...); pass it to OpenTelemetry's <c>AddMeter</c>. Each broker's meter carries a
    /// <c>server_id</c> tag.
    /// </summary>
    public const string MeterName = "Broker";

    /// <summary>Adds a plugin given as an instance (embedding); the host adds the plugins it loads the same way.</summary>
    /// <param name="plugin">The plugin.</param>
    /// <param name="manifest">Its manifest; read from its assembly when <see langword="null"/>.</param>
    /// <returns>This server.</returns>
    /// <exception cref="InvalidOperationException">The broker has already started, or the plugin needs a newer contract.</exception>
    public BrokerServer AddPlugin(IBrokerPlugin plugin, PluginManifest? manifest = null)
    {
        ArgumentNullException.ThrowIfNull(plugin);
        EnsureNotStarted();
        manifest ??= PluginManifests.For(plugin);
        if (!BrokerContract.IsCompatible(manifest.MinimumContractVersion, BrokerContract.Version))
        {
            throw new InvalidOperationException(
                $"Plugin '{manifest.Id}' needs contract {manifest.MinimumContractVersion} but this broker provides {BrokerContract.Version}.");
        }

        plugins.Add((plugin, manifest));
        return this;
    }

    /// <summary>Registers services directly, without a plugin (for example a middleware of the embedding application).</summary>
    /// <param name="configure">Adds services to the broker's collection.</param>
    /// <returns>This server.</returns>
    public BrokerServer ConfigureServices(Action<Microsoft.Extensions.DependencyInjection.IServiceCollection> configure)
    {
        ArgumentNullException.ThrowIfNull(configure);
        EnsureNotStarted();
        serviceConfigurations.Add(configure);
        return this;
    }

    /// <summary>The bound endpoint of a listener by name (<see cref="ClientListenerName"/> or a plugin's).</summary>
    /// <param name="listenerName">The listener's name.</param>
    /// <returns>The endpoint.</returns>
    /// <exception cref="InvalidOperationException">The broker has not been started or has no such listener.</exception>
    public EndPoint GetEndPoint(string listenerName)
    {
        foreach (var host in listeners)
        {
            if (host.Definition.Name == listenerName)
            {
                return host.EndPoint;
            }
        }

        throw new InvalidOperationException($"No listener named '{listenerName}' is running.");
    }

    /// <summary>The names and bound endpoints of every running listener.</summary>
    public IReadOnlyDictionary<string, EndPoint> EndPoints => listeners.ToDictionary(l => l.Definition.Name, l => l.EndPoint);

    internal BrokerCore Core => core;

    /// <summary>Formats <c>scheme://host:port</c>, replacing an any-address with loopback so the URL is dialable.</summary>
    /// <param name="scheme">The URL scheme.</param>
    /// <param name="endPoint">The endpoint.</param>
    /// <returns>The URL.</returns>
    public static string FormatUrl(string scheme, IPEndPoint endPoint)
    {
        ArgumentNullException.ThrowIfNull(endPoint);
        var address = endPoint.Address;
        if (address.Equals(IPAddress.Any))
        {
            address = IPAddress.Loopback;
        }
        else if (address.Equals(IPAddress.IPv6Any))
        {
            address = IPAddress.IPv6Loopback;
        }

        return $"{scheme}://{new IPEndPoint(address, endPoint.Port)}";
    }

    private void EnsureNotStarted()
    {
        if (Volatile.Read(ref state) != 0)
        {
            throw new InvalidOperationException("The broker has already been started.");
        }
    }
}
