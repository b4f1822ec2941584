using Broker.Abstractions;
using Broker.JetStream;
using Broker.JetStream.Internal;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;

// 1.4: ActivationKeys. Without its section (a jetstream block, -js, -sd, store_dir, default_js_domain, all mapped into
// Plugins:JetStream) it registers nothing, so the host need not load it.
[assembly: BrokerPlugin(typeof(JetStreamPlugin), Id = "JetStream", MinimumContractVersion = "1.4",
    ConfigurationAliases = ["js"], ConfigurationKeys = ["store_dir", "storedir", "default_js_domain"], ActivationKeys = [])]

namespace Broker.JetStream;

/// <summary>
/// JetStream as a plugin. The host loads it from <c>plugins/Broker.JetStream/</c>; it reads nats-server's settings from
/// its section <c>Plugins:JetStream</c> (the <c>jetstream { }</c> block of a configuration file, <c>-js</c> as
/// <c>enabled</c>, <c>-sd</c> and the top-level <c>store_dir</c> as <c>store_dir</c>, the top-level
/// <c>default_js_domain</c>) and does nothing unless JetStream is enabled there, as nats-server: by a block that does
/// not say <c>enabled: false</c>, by <c>jetstream: enabled</c> or <c>true</c>, by <c>-js</c>. Embedding adds it with <c>server.AddPlugin(new JetStreamPlugin(options))</c>
/// beside at least one storage plugin (the memory store: <c>Broker.Storage.MemStore</c>).
/// </summary>
public sealed class JetStreamPlugin : IBrokerPlugin
{
    private readonly JetStreamOptions? options;

    /// <summary>Creates the plugin with settings read from its configuration section (the host's way).</summary>
    public JetStreamPlugin()
    {
    }

    /// <summary>Creates the plugin, enabled, with the given settings (embedding).</summary>
    /// <param name="options">The settings; copied.</param>
    public JetStreamPlugin(JetStreamOptions options)
    {
        ArgumentNullException.ThrowIfNull(options);
        this.options = options.Clone();
    }

    /// <inheritdoc />
    /// <exception cref="PluginConfigurationException">A setting of the <c>jetstream</c> block is not valid.</exception>
    public void ConfigureServices(IServiceCollection services, PluginContext context)
    {
        ArgumentNullException.ThrowIfNull(services);
        ArgumentNullException.ThrowIfNull(context);
        var domains = JetStreamOptionsReader.ReadDefaultDomains(context.Configuration);
        var settings = options ?? JetStreamOptionsReader.Read(context.Configuration);
        if (settings is null)
        {
            if (domains.Values.Any(d => d.Length > 0))
            {
                services.AddSingleton<IHostedService>(sp => new DefaultDomainForwarder(
                    domains, sp.GetRequiredService<IMessageBus>(), sp.GetService<ISubjectInterest>(), sp.GetRequiredService<ILoggerFactory>()));
            }

            return;
        }

        if (domains.Count > 0)
        {
            settings.DefaultDomains = domains;
        }

        services.AddSingleton(sp => new JetStreamEngine(
            settings,
            sp.GetRequiredService<IMessageBus>(),
            sp.GetServices<IStreamStoreProvider>(),
            sp.GetService<ISubjectInterest>(),
            sp.GetRequiredService<ILoggerFactory>(),
            sp.GetService<IAccountDirectory>(),
            sp.GetService<ServerIdentity>()));
        services.AddSingleton<IHostedService>(sp => sp.GetRequiredService<JetStreamEngine>());
        services.AddSingleton<IMonitoringEndpoint>(sp => new JszEndpoint(sp.GetRequiredService<JetStreamEngine>(), sp.GetService<ServerIdentity>()));
        services.AddSingleton(new ServerFeature(ServerFeature.JetStream));
        if (!string.IsNullOrEmpty(settings.Domain))
        {
            services.AddSingleton(new ServerFeature(ServerFeature.JetStreamDomain) { Value = settings.Domain });
        }
    }
}
