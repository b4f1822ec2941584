using System.Globalization;
using Broker.Abstractions;
using Broker.JetStream;
using Broker.JetStream.Internal;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;

[assembly: BrokerPlugin(typeof(JetStreamPlugin), Id = "JetStream", MinimumContractVersion = "1.1")]

namespace Broker.JetStream;

/// <summary>
/// Enables JetStream on a broker: add it with <c>server.AddPlugin(new JetStreamPlugin(options))</c> together with at least
/// one storage plugin (the memory store: <c>Broker.Storage.MemStore</c>). The host adds it for <c>-js</c> or a
/// <c>jetstream {}</c> block. Without options it reads them from its configuration section (<c>Plugins:JetStream</c>:
/// <c>StoreDirectory</c>, <c>MaxMemoryStore</c>, <c>MaxFileStore</c>, <c>Domain</c>).
/// </summary>
public sealed class JetStreamPlugin : IBrokerPlugin
{
    private readonly JetStreamOptions? options;

    /// <summary>Creates the plugin with settings read from its configuration section.</summary>
    public JetStreamPlugin()
    {
    }

    /// <summary>Creates the plugin with the given settings.</summary>
    /// <param name="options">The settings; copied.</param>
    public JetStreamPlugin(JetStreamOptions options)
    {
        ArgumentNullException.ThrowIfNull(options);
        this.options = options.Clone();
    }

    /// <inheritdoc />
    public void ConfigureServices(IServiceCollection services, PluginContext context)
    {
        ArgumentNullException.ThrowIfNull(services);
        ArgumentNullException.ThrowIfNull(context);
        var settings = options ?? Read(context.Configuration);
        services.AddSingleton(sp => new JetStreamEngine(
            settings,
            sp.GetRequiredService<IMessageBus>(),
            sp.GetServices<IStreamStoreProvider>(),
            sp.GetService<ISubjectInterest>(),
            sp.GetRequiredService<ILoggerFactory>()));
        services.AddSingleton<IHostedService>(sp => sp.GetRequiredService<JetStreamEngine>());
        services.AddSingleton<IMonitoringEndpoint>(sp => new JszEndpoint(sp.GetRequiredService<JetStreamEngine>(), sp.GetService<ServerIdentity>()));
        services.AddSingleton(new ServerFeature(ServerFeature.JetStream));
    }

    private static JetStreamOptions Read(IConfiguration configuration) => new()
    {
        StoreDirectory = configuration["StoreDirectory"],
        MaxMemoryStore = long.TryParse(configuration["MaxMemoryStore"], NumberStyles.Integer, CultureInfo.InvariantCulture, out var memory) ? memory : 0,
        MaxFileStore = long.TryParse(configuration["MaxFileStore"], NumberStyles.Integer, CultureInfo.InvariantCulture, out var file) ? file : 0,
        Domain = configuration["Domain"],
    };
}
