using Broker.Abstractions;
using Broker.JetStream;
using Broker.JetStream.Internal;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;

[assembly: BrokerPlugin(typeof(JetStreamPlugin), Id = "JetStream", MinimumContractVersion = "1.1",
    ConfigurationAliases = ["js"], ConfigurationKeys = ["store_dir", "storedir"])]

namespace Broker.JetStream;

/// <summary>
/// JetStream as a plugin. The host loads it from <c>plugins/Broker.JetStream/</c>; it reads nats-server's settings from
/// its section <c>Plugins:JetStream</c> (the <c>jetstream { }</c> block of a configuration file, <c>-js</c> as
/// <c>enabled</c>, <c>-sd</c> and the top-level <c>store_dir</c> as <c>store_dir</c>) and does nothing unless JetStream
/// is enabled there, as nats-server. Embedding adds it with <c>server.AddPlugin(new JetStreamPlugin(options))</c>
/// beside at least one storage plugin (the memory store: <c>Broker.Storage.MemStore</c>).
/// </summary>
public sealed class JetStreamPlugin : IBrokerPlugin
{
    // nats-server's jetstream keys this broker reads; the others (cipher, sync_interval, limits, ...) are reported as
    // not supported yet when JetStream starts.
    private static readonly string[] KnownKeys =
    [
        "enabled", "enable", "store_dir", "storedir", "store", "max_memory_store", "max_mem_store", "max_mem",
        "max_file_store", "max_file", "domain", "max_ack_pending",
    ];

    // nats-server's jetstream keys that belong to the file store plugin's block here.
    private static readonly string[] FileStoreKeys = ["sync_interval", "cipher", "key"];

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
        var settings = options ?? Read(context.Configuration);
        if (settings is null)
        {
            return;
        }

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

    /// <summary>The settings of the section, or <see langword="null"/> when JetStream is not enabled there.</summary>
    private static JetStreamOptions? Read(IConfiguration section)
    {
        // "jetstream: enabled" / "jetstream: false" arrive as the section's own value; "-js" as "enabled: true"; a block
        // enables JetStream unless it says "enabled: false"; a store directory alone does not.
        var value = (section as IConfigurationSection)?.Value;
        bool enabled;
        if ((section.GetBool("enabled") ?? section.GetBool("enable")) is { } explicitly)
        {
            enabled = explicitly;
        }
        else if (!string.IsNullOrWhiteSpace(value))
        {
            enabled = value.Trim().ToUpperInvariant() switch
            {
                "ENABLED" or "ENABLE" => true,
                "DISABLED" or "DISABLE" => false,
                _ => ConfigSyntax.TryParseBool(value, out var flag) ? flag : throw section.Refuse(null, $"expected a boolean, \"enabled\" or a block, but got '{value}'"),
            };
        }
        else
        {
            enabled = value is not null || section.GetChildren().Any(c => c.Key is not ("store_dir" or "storedir"));
        }

        if (!enabled)
        {
            return null;
        }

        // nats-server keeps the file store's settings in this block; here the file store plugin owns them, in its
        // own block. Ignoring them would run unencrypted, or with another durability, than the file says: refuse.
        foreach (var key in FileStoreKeys)
        {
            if (section[key] is not null)
            {
                throw section.Refuse(key, $"the file store reads {key} from its own block: write it as filestore {{ {key}: ... }} (docs/durability.md)");
            }
        }

        return new JetStreamOptions
        {
            StoreDirectory = section["store_dir"] ?? section["storedir"] ?? section["store"],
            MaxMemoryStore = section.GetSize("max_memory_store") ?? section.GetSize("max_mem_store") ?? section.GetSize("max_mem") ?? 0,
            MaxFileStore = section.GetSize("max_file_store") ?? section.GetSize("max_file") ?? 0,
            Domain = section["domain"],
            MaxAckPending = section.GetInt32("max_ack_pending") ?? 0,
            IgnoredSettings = [.. section.GetChildren().Select(c => c.Key).Where(key => !KnownKeys.Contains(key, StringComparer.OrdinalIgnoreCase))],
        };
    }
}
