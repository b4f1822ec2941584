using Broker.Abstractions;
using Broker.Storage.FileStore;
using Broker.Storage.FileStore.Internal;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging;

// 1.4: appends with a given timestamp and a time to live (StoreOptions, StoreFeatures); subject expiries. Only JetStream
// uses a store, so the plugin is loaded only when JetStream's section (or its own, filestore { }) is configured.
[assembly: BrokerPlugin(typeof(FileStorePlugin), Id = FileStorePlugin.Id, MinimumContractVersion = "1.4", ActivationKeys = ["Plugins:JetStream"])]

namespace Broker.Storage.FileStore;

/// <summary>
/// The file store plugin: registers the <c>"file"</c> storage type (<see cref="FileStoreProvider"/>) with settings from
/// <c>Plugins:FileStore</c>, a <c>filestore { }</c> block, or nats-server's keys of the <c>jetstream { }</c> block
/// (<c>sync_interval</c>, <c>cipher</c>, <c>key</c>, which the host maps here); also <c>compression</c>,
/// <c>block_size</c>, <c>checkpoint_interval</c>, <c>cache_expiry</c>. See <see cref="FileStoreOptions"/> and
/// <c>docs/durability.md</c>.
/// </summary>
public sealed class FileStorePlugin : IBrokerPlugin
{
    /// <summary>The plugin id: its configuration section <c>Plugins:FileStore</c> and its name in logs.</summary>
    public const string Id = "FileStore";

    private readonly FileStoreOptions? options;

    /// <summary>Creates the plugin with settings read from its configuration section (the host's way).</summary>
    public FileStorePlugin()
    {
    }

    /// <summary>Creates the plugin with the given settings (embedding).</summary>
    /// <param name="options">The settings.</param>
    public FileStorePlugin(FileStoreOptions options)
    {
        ArgumentNullException.ThrowIfNull(options);
        options.Validate();
        this.options = options;
    }

    /// <inheritdoc/>
    public void ConfigureServices(IServiceCollection services, PluginContext context)
    {
        ArgumentNullException.ThrowIfNull(services);
        ArgumentNullException.ThrowIfNull(context);

        // Read now so a bad setting stops the broker before any stream opens.
        var settings = options ?? FileStoreOptionsReader.Read(context.Configuration);
        services.AddSingleton<IStreamStoreProvider>(provider => new FileStoreProvider(settings, provider.GetService<ILoggerFactory>()));
    }
}
