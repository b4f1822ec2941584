using Broker.Abstractions;

namespace Broker.FileStore.Tests;

/// <summary>
/// Consumer stores deleted together (issue 25, leave4: 10,000 MQTT QoS 1 sessions leaving delete a consumer each, one
/// request after the other on the JetStream API loop): a deletion renames the folder out of the consumer's name on the
/// caller's thread and completes after a sync of <c>obs/</c> shared with the deletions made meanwhile; the files go
/// afterwards, in the background. A completed deletion survives a power cut, and a restart removes the leftovers.
/// </summary>
public sealed class ConsumerDeletionTests
{
    [Fact(Timeout = 90_000)]
    public async Task Deletes_made_together_complete_before_their_files_go_share_syncs_and_survive_a_power_cut()
    {
        using var fixture = new StoreFixture(simulated: true);
        var disk = fixture.Disk!;
        var store = await fixture.CreateAsync();
        const int Consumers = 1_000;
        var consumers = new List<IConsumerStore>();
        for (var i = 0; i < Consumers; i++)
        {
            var consumer = store.OpenConsumerStore(new ConsumerStoreConfig { Name = "C" + i, Durable = true });
            consumer.SetStarting(1);
            consumers.Add(consumer);
        }

        await Task.WhenAll(consumers.Select(c => c.FlushAsync().AsTask()));
        var kept = store.OpenConsumerStore(new ConsumerStoreConfig { Name = "kept", Durable = true });
        await kept.FlushAsync();

        // No file of a deleted consumer may be removed until the deletes completed (a removal waits here at most 15 s:
        // on a store that removes each folder on the deleting thread, the first delete waits that long, then all go on).
        using var release = new ManualResetEventSlim();
        disk.BeforeDeleteDirectory = _ =>
        {
            if (!release.Wait(TimeSpan.FromSeconds(15)))
            {
                release.Set();
            }
        };
        var syncs = disk.Syncs;

        // One after the other on one thread, as the API loop asks.
        var deletes = consumers.Select(c => c.DeleteAsync().AsTask()).ToList();
        var all = Task.WhenAll(deletes);
        await Task.WhenAny(all, Task.Delay(TimeSpan.FromSeconds(30)));
        var completedWhileHeld = release.IsSet ? 0 : deletes.Count(d => d.IsCompletedSuccessfully);
        Assert.Equal(Consumers, completedWhileHeld);
        Assert.False(release.IsSet);
        syncs = disk.Syncs - syncs;
        Assert.True(syncs < Consumers, $"{syncs} syncs for {Consumers} deletes");
        Assert.DoesNotContain(disk.ListDirectories(ObsOf(fixture)), name => name.StartsWith('C'));

        fixture.Disk = disk.PowerCut();
        release.Set();
        await store.DisposeAsync();
        var reopened = await fixture.ReopenAsync();
        await using (reopened.ConfigureAwait(false))
        {
            Assert.Equal("kept", Assert.Single(reopened.ConsumerStores).Config.Name);

            // The renamed folders the power cut left are removed in the background after the restart.
            var left = fixture.Disk.ListDirectories(ObsOf(fixture));
            for (var wait = 0; left.Count > 1 && wait < 200; wait++)
            {
                await Task.Delay(50);
                left = fixture.Disk.ListDirectories(ObsOf(fixture));
            }

            Assert.Equal(["kept"], left);
        }
    }

    [Fact(Timeout = 30_000)]
    public async Task A_deleted_consumers_files_are_removed_after_its_delete_and_its_name_is_created_again()
    {
        using var fixture = new StoreFixture(simulated: true);
        var disk = fixture.Disk!;
        await using var store = await fixture.CreateAsync();
        var consumer = store.OpenConsumerStore(new ConsumerStoreConfig { Name = "D", Durable = true });
        await consumer.FlushAsync();
        await consumer.DeleteAsync();
        var again = store.OpenConsumerStore(new ConsumerStoreConfig { Name = "D", Durable = true, MaxDeliver = 7 });
        await again.FlushAsync();

        var left = disk.ListDirectories(ObsOf(fixture));
        for (var wait = 0; left.Count > 1 && wait < 200; wait++)
        {
            await Task.Delay(50);
            left = disk.ListDirectories(ObsOf(fixture));
        }

        Assert.Equal(["D"], left);
        Assert.Equal(7, Assert.Single(store.ConsumerStores).Config.MaxDeliver);
    }

    private static string ObsOf(StoreFixture fixture) => Path.Combine(fixture.StreamDirectory("S"), "obs");
}
