using Broker.Abstractions;
using Broker.Samples.SampleStore;
using Microsoft.Extensions.DependencyInjection;

// 1.4: appends with a given timestamp and a time to live (StoreOptions, StoreFeatures); subject expiries.
[assembly: BrokerPlugin(typeof(SampleStorePlugin), Id = "SampleStore", MinimumContractVersion = "1.4")]

namespace Broker.Samples.SampleStore;

/// <summary>Registers the "sample" storage type.</summary>
public sealed class SampleStorePlugin : IBrokerPlugin
{
    public void ConfigureServices(IServiceCollection services, PluginContext context) =>
        services.AddSingleton<IStreamStoreProvider>(new SampleStoreProvider());
}

/// <summary>Creates "sample" stores: in memory, nothing survives a restart.</summary>
public sealed class SampleStoreProvider : IStreamStoreProvider
{
    public string StorageType => "sample";

    public StorageMedium Medium => StorageMedium.Memory;

    public StoreFeatures Features => StoreFeatures.Timestamps | StoreFeatures.MessageTtl | StoreFeatures.SubjectExpiries;

    public ValueTask<IStreamStore> CreateAsync(StreamStoreConfig config, CancellationToken cancellationToken = default) =>
        ValueTask.FromResult<IStreamStore>(new SampleStreamStore(config));

    public ValueTask<IReadOnlyList<IStreamStore>> RecoverAsync(StoreRecoveryContext context, CancellationToken cancellationToken = default) =>
        ValueTask.FromResult<IReadOnlyList<IStreamStore>>([]);
}
