using Broker.Storage.FileStore;
using Broker.Storage.FileStore.Internal;
using static Broker.FileStore.Tests.StoreFixture;

namespace Broker.FileStore.Tests;

/// <summary>
/// Block caches: at most <see cref="BlockSet.MaxCachedSealedBlocks"/> sealed blocks keep their records in
/// memory, evicted blocks read back intact, buffers of removed blocks are reused by new ones, a clean stop leaves the
/// last block without its preallocated tail, and a block begun after the last checkpoint (its object prepared, its
/// file created by the committer) survives a crash.
/// </summary>
public sealed class BlockCacheTests : IDisposable
{
    private readonly StoreFixture fixture = new(new FileStoreOptions { BlockSize = 4096 });

    public void Dispose() => fixture.Dispose();

    [Fact(Timeout = 30_000)]
    public async Task Sealed_block_caches_are_trimmed_to_the_bound_and_evicted_blocks_read_back()
    {
        await using var store = await fixture.CreateAsync();
        var payload = new string('c', 400);
        for (var i = 1; i <= 300; i++)
        {
            Put(store, "S.k" + (i % 5), payload + i);
        }

        await store.FlushAsync();
        var files = (FileStreamStore)store;
        Assert.True(files.BlockCount > 20, $"{files.BlockCount} blocks");

        // Reading every message loads every block; the bound is restored between operations (the maintenance tick,
        // every second, when no commit round runs), and every load is intact, forwards and backwards.
        for (ulong s = 1; s <= 300; s++)
        {
            Assert.Equal(payload + s, Get(store, s)!.Value.Payload);
        }

        await WaitForBoundAsync(files);
        for (var s = 300UL; s >= 1; s--)
        {
            Assert.Equal(payload + s, Get(store, s)!.Value.Payload);
        }

        await WaitForBoundAsync(files);
    }

    [Fact(Timeout = 30_000)]
    public async Task Blocks_of_a_bounded_stream_reuse_the_caches_of_removed_blocks()
    {
        await using var store = await fixture.CreateAsync(configure: c => c with { MaxMessages = 40 });
        var payload = new string('r', 400);
        var files = (FileStreamStore)store;
        var mostFree = 0;
        for (var i = 1; i <= 400; i++)
        {
            await store.WaitForDurableAsync(Put(store, "S.r", payload + i).Sequence);
            mostFree = Math.Max(mostFree, files.FreeCaches);
        }

        // Removed blocks gave their full-size caches to the store's free list (bounded), where new tails take them.
        Assert.InRange(mostFree, 1, BlockBuffers.MaxFreeCaches);
        Assert.Equal(40UL, store.GetState().Messages);
        Assert.Equal(payload + 361, Get(store, 361)!.Value.Payload);
        Assert.Equal(payload + 400, Get(store, 400)!.Value.Payload);
    }

    [Fact(Timeout = 30_000)]
    public async Task A_clean_stop_cuts_the_preallocated_tail_of_the_last_block()
    {
        using var large = new StoreFixture();
        await using (var store = await large.CreateAsync())
        {
            for (var i = 1; i <= 10; i++)
            {
                await store.WaitForDurableAsync(Put(store, "S.t", "tail-" + i).Sequence);
            }
        }

        // Written inside 1 MiB of preallocated space; after the stop the file ends at its last record.
        var last = Directory.GetFiles(Path.Combine(large.StreamDirectory("S"), "msgs"), "*.blk").Single();
        Assert.InRange(new FileInfo(last).Length, 32, 4096);
        await using var reopened = await large.ReopenAsync();
        Assert.Equal("tail-10", Get(reopened, 10)!.Value.Payload);
        Assert.Equal(11UL, Put(reopened, "S.t", "next").Sequence);
    }

    [Fact(Timeout = 30_000)]
    public async Task After_a_clean_stop_the_tail_block_is_read_when_first_needed_and_appended_to_in_place()
    {
        using var large = new StoreFixture();
        await using (var store = await large.CreateAsync())
        {
            for (var i = 1; i <= 10; i++)
            {
                await store.WaitForDurableAsync(Put(store, "S.t", "tail-" + i).Sequence);
            }
        }

        var blocksDirectory = Path.Combine(large.StreamDirectory("S"), "msgs");
        var blockFile = Directory.GetFiles(blocksDirectory, "*.blk").Single();

        // The first operation is an append: it reads the tail's records, then writes after them in the same file.
        await using (var reopened = await large.ReopenAsync())
        {
            var files = (FileStreamStore)reopened;
            Assert.False(files.TailInMemory);
            Assert.Equal(10UL, reopened.GetState().Messages);
            await reopened.WaitForDurableAsync(Put(reopened, "S.t", "tail-11").Sequence);
            Assert.True(files.TailInMemory);
            Assert.Equal("tail-3", Get(reopened, 3)!.Value.Payload);
        }

        // The first operation is a read, then a removal.
        await using (var reopened = await large.ReopenAsync())
        {
            var files = (FileStreamStore)reopened;
            Assert.False(files.TailInMemory);
            Assert.Equal("tail-11", Get(reopened, 11)!.Value.Payload);
            Assert.True(files.TailInMemory);
            Assert.True(reopened.Remove(4));
            await reopened.WaitForDurableAsync(Put(reopened, "S.t", "tail-12").Sequence);
        }

        Assert.Equal(blockFile, Directory.GetFiles(blocksDirectory, "*.blk").Single());
        await using (var reopened = await large.ReopenAsync())
        {
            var state = reopened.GetState();
            Assert.Equal(11UL, state.Messages);
            Assert.Equal(12UL, state.LastSequence);
            Assert.Null(Get(reopened, 4));
            foreach (var s in new ulong[] { 1, 3, 5, 10, 11, 12 })
            {
                Assert.Equal("tail-" + s, Get(reopened, s)!.Value.Payload);
            }
        }
    }

    [Fact(Timeout = 60_000)]
    public async Task A_block_begun_after_the_last_checkpoint_survives_a_power_cut()
    {
        using var simulated = new StoreFixture(new FileStoreOptions { BlockSize = 4096, CheckpointInterval = TimeSpan.FromMilliseconds(50) }, simulated: true);
        var disk = simulated.Disk!;
        var store = await simulated.CreateAsync();
        var payload = new string('b', 300);
        for (var i = 1; i <= 50; i++)
        {
            Put(store, "S.a", payload + i);
        }

        await store.FlushAsync();
        var deadline = DateTime.UtcNow.AddSeconds(20);
        while (!disk.AllFiles().Any(f => f.EndsWith("index.db", StringComparison.Ordinal)) && DateTime.UtcNow < deadline)
        {
            await Task.Delay(20);
        }

        // A checkpoint now names the next block id; new blocks begin after it, then the power goes.
        await Task.Delay(1200);
        for (var i = 51; i <= 90; i++)
        {
            await store.WaitForDurableAsync(Put(store, "S.b", payload + i).Sequence);
        }

        simulated.Disk = disk.PowerCut();
        await store.DisposeAsync();

        await using var reopened = await simulated.ReopenAsync();
        Assert.Equal(90UL, reopened.GetState().Messages);
        for (ulong s = 1; s <= 90; s++)
        {
            Assert.Equal(payload + s, Get(reopened, s)!.Value.Payload);
        }
    }

    private static async Task WaitForBoundAsync(FileStreamStore files)
    {
        var deadline = DateTime.UtcNow.AddSeconds(10);
        while (files.CachedSealedBlocks > BlockSet.MaxCachedSealedBlocks && DateTime.UtcNow < deadline)
        {
            await Task.Delay(50);
        }

        Assert.InRange(files.CachedSealedBlocks, 0, BlockSet.MaxCachedSealedBlocks);
    }
}
