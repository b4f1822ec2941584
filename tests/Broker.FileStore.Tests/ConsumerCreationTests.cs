using System.Text;
using Broker.Abstractions;
using Broker.Storage.FileStore;

namespace Broker.FileStore.Tests;

/// <summary>
/// Consumer stores created together (issue 25: 10,000 MQTT QoS 1 subscriptions, a consumer each): a new store makes its
/// folder and <c>meta.inf</c> in its first round, off the caller, and the folders made at the same time share their
/// syncs of <c>obs/</c>; a store whose flush completed survives a power cut.
/// </summary>
public sealed class ConsumerCreationTests
{
    [Theory(Timeout = 60_000)]
    [InlineData(PowerCutMode.DropUnsynced)]
    [InlineData(PowerCutMode.TornTail)]
    public async Task Consumers_created_together_survive_a_power_cut_with_fewer_syncs(PowerCutMode mode)
    {
        using var fixture = new StoreFixture(simulated: true);
        var disk = fixture.Disk!;
        var store = await fixture.CreateAsync();
        await store.FlushAsync();
        const int Consumers = 1_000;
        var before = disk.Syncs;
        var flushes = new List<Task>();
        for (var i = 0; i < Consumers; i++)
        {
            var consumer = store.OpenConsumerStore(new ConsumerStoreConfig { Name = "C" + i, Durable = true, MaxDeliver = i + 1, Metadata = Encoding.UTF8.GetBytes("{\"n\":" + i + "}") });
            consumer.SetStarting(1);
            flushes.Add(consumer.FlushAsync().AsTask());
        }

        await Task.WhenAll(flushes);

        // Each: meta.inf, o.dat, its folder, and obs/ (shared when rounds overlap, which depends on the machine's load:
        // SharedDirectorySyncTests shows the sharing itself). Made one by one they took five: obs/, meta.inf and its
        // folder when opened, then o.dat and its folder again in the first round.
        var syncs = disk.Syncs - before;
        Assert.True(syncs < 5 * Consumers, $"{syncs} syncs for {Consumers} consumers");

        fixture.Disk = disk.PowerCut(mode, 3);
        await store.DisposeAsync();
        await using var reopened = await fixture.ReopenAsync();
        Assert.Equal(Consumers, reopened.ConsumerStores.Count);
        foreach (var consumer in reopened.ConsumerStores)
        {
            var n = int.Parse(consumer.Config.Name.AsSpan(1), System.Globalization.CultureInfo.InvariantCulture);
            Assert.Equal(n + 1, consumer.Config.MaxDeliver);
            Assert.Equal("{\"n\":" + n + "}", Encoding.UTF8.GetString(consumer.Config.Metadata.Span));
            Assert.True(consumer.HasState, consumer.Config.Name);
        }
    }

    [Fact(Timeout = 30_000)]
    public async Task A_create_is_durable_on_its_flush_under_a_sync_interval()
    {
        using var fixture = new StoreFixture(new FileStoreOptions { SyncInterval = TimeSpan.FromMinutes(2) }, simulated: true);
        var disk = fixture.Disk!;
        var store = await fixture.CreateAsync();
        await store.FlushAsync();
        var consumer = store.OpenConsumerStore(new ConsumerStoreConfig { Name = "D", Durable = true });
        await consumer.FlushAsync();

        fixture.Disk = disk.PowerCut();
        await store.DisposeAsync();
        await using var reopened = await fixture.ReopenAsync();
        Assert.Equal("D", Assert.Single(reopened.ConsumerStores).Config.Name);
    }

    [Fact(Timeout = 30_000)]
    public async Task A_consumer_deleted_at_once_leaves_no_folder_and_its_name_is_created_again()
    {
        using var fixture = new StoreFixture();
        await using var store = await fixture.CreateAsync();
        var obs = Path.Combine(fixture.StreamDirectory("S"), "obs");
        for (var round = 0; round < 50; round++)
        {
            var consumer = store.OpenConsumerStore(new ConsumerStoreConfig { Name = "C" + (round % 3), Durable = true });
            await consumer.DeleteAsync();
            Assert.False(Directory.Exists(Path.Combine(obs, "C" + (round % 3))), $"round {round}");
        }

        var kept = store.OpenConsumerStore(new ConsumerStoreConfig { Name = "C0", Durable = true });
        await kept.FlushAsync();
        Assert.True(File.Exists(Path.Combine(obs, "C0", "meta.inf")));
        // The deleted ones' folders were renamed out of their names (dot names) and go in the background.
        Assert.Equal(["C0"], Directory.GetDirectories(obs).Select(Path.GetFileName).Where(name => !name!.StartsWith('.')));
    }
}
