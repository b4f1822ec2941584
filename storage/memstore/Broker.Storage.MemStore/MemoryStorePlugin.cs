using Broker.Abstractions;
using Broker.Storage.MemStore;
using Microsoft.Extensions.DependencyInjection;

// 1.4: appends with a given timestamp and a time to live (StoreOptions, StoreFeatures); subject expiries. Only JetStream
// uses a store, so the plugin is loaded only when JetStream's section is configured.
[assembly: BrokerPlugin(typeof(MemoryStorePlugin), Id = "MemStore", MinimumContractVersion = "1.4", ActivationKeys = ["Plugins:JetStream"])]

namespace Broker.Storage.MemStore;

/// <summary>
/// The memory store plugin: registers <see cref="MemoryStoreProvider"/>, which serves JetStream streams whose
/// <c>storage</c> is <c>"memory"</c>. It has no settings.
/// </summary>
public sealed class MemoryStorePlugin : IBrokerPlugin
{
    /// <inheritdoc />
    public void ConfigureServices(IServiceCollection services, PluginContext context)
    {
        services.AddSingleton<IStreamStoreProvider>(new MemoryStoreProvider());
    }
}
