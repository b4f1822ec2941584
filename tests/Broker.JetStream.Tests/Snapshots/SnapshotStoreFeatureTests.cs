using System.Text.Json.Nodes;
using Broker.Abstractions;
using Broker.Samples.SampleStore;
using Microsoft.Extensions.DependencyInjection;

namespace Broker.JetStream.Tests.Snapshots;

/// <summary>
/// Restores into third-party stores: the sample store (contract 1.4, <see cref="StoreFeatures.Timestamps"/>) keeps
/// every message's time; a store written against contract 1.3 (no <see cref="StoreFeatures"/>) gets every message at
/// its sequence with the restore's time instead.
/// </summary>
public class SnapshotStoreFeatureTests
{
    [Fact(Timeout = 60_000)]
    public async Task The_sample_store_keeps_the_times_a_1_3_store_takes_the_restore_time()
    {
        await using var server = await JetStreamServer.StartAsync(extraPlugins: [new SampleStorePlugin(), new TimelessStorePlugin()]);
        await using var connection = server.Connect();
        await SnapshotKit.BuildAsync(connection, "S", "memory");
        var before = await SnapshotKit.DescribeAsync(connection, "S");
        var beforeWithoutTimes = await SnapshotKit.DescribeAsync(connection, "S", withTimes: false);
        var (_, archive, _) = await SnapshotKit.SnapshotAsync(connection, "S");

        await SnapshotKit.Ok(connection, "$JS.API.STREAM.DELETE.S");
        var (_, final) = await SnapshotKit.RestoreAsync(connection, "S", SnapshotKit.Config("S", "sample"), archive);
        Assert.True(final!["error"] is null, final.ToJsonString());
        Assert.Equal(before, await SnapshotKit.DescribeAsync(connection, "S"));

        await SnapshotKit.Ok(connection, "$JS.API.STREAM.DELETE.S");
        // Whole milliseconds: the sample store keeps times at that precision, so a message stored in the same millisecond
        // would otherwise look older than the restore.
        var restoredAt = DateTimeOffset.FromUnixTimeMilliseconds(DateTimeOffset.UtcNow.ToUnixTimeMilliseconds());
        (_, final) = await SnapshotKit.RestoreAsync(connection, "S", SnapshotKit.Config("S", "timeless"), archive);
        Assert.True(final!["error"] is null, final.ToJsonString());
        Assert.Equal(beforeWithoutTimes, await SnapshotKit.DescribeAsync(connection, "S", withTimes: false));
        var first = await SnapshotKit.ApiAsync(connection, "$JS.API.STREAM.MSG.GET.S", """{"seq":3}""");
        Assert.True(DateTimeOffset.Parse((string)first["message"]!["time"]!, System.Globalization.CultureInfo.InvariantCulture) >= restoredAt);
    }

    /// <summary>A store type as a contract 1.3 provider offers it: the sample store without <see cref="StoreFeatures"/>.</summary>
    private sealed class TimelessStorePlugin : IBrokerPlugin
    {
        public void ConfigureServices(IServiceCollection services, PluginContext context) =>
            services.AddSingleton<IStreamStoreProvider>(new TimelessProvider());
    }

    private sealed class TimelessProvider : IStreamStoreProvider
    {
        private readonly SampleStoreProvider inner = new();

        public string StorageType => "timeless";

        public StorageMedium Medium => StorageMedium.Memory;

        public ValueTask<IStreamStore> CreateAsync(StreamStoreConfig config, CancellationToken cancellationToken = default) => inner.CreateAsync(config, cancellationToken);

        public ValueTask<IReadOnlyList<IStreamStore>> RecoverAsync(StoreRecoveryContext context, CancellationToken cancellationToken = default) => inner.RecoverAsync(context, cancellationToken);
    }
}
