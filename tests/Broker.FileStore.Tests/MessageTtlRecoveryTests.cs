using System.Buffers;
using System.Text;
using Broker.Abstractions;
using static Broker.FileStore.Tests.StoreFixture;

namespace Broker.FileStore.Tests;

/// <summary>
/// The file store's times to live after a crash: the TTL records written since the last checkpoint are replayed (a
/// clean close checkpoints them, which the conformance suite's restart covers).
/// </summary>
public sealed class MessageTtlRecoveryTests
{
    [Fact(Timeout = 30_000)]
    public async Task Times_to_live_are_replayed_from_the_records_after_a_crash()
    {
        using var fixture = new StoreFixture(simulated: true);
        var disk = fixture.Disk!;
        var store = await fixture.CreateAsync("T", c => c with { MaxAge = TimeSpan.FromSeconds(5) });
        Assert.True(PutWith(store, "T.never", Timeout.InfiniteTimeSpan).IsStored);
        Assert.True(PutWith(store, "T.short", TimeSpan.FromSeconds(1)).IsStored);
        Assert.True(Put(store, "T.plain", "p").IsStored);
        await store.WaitForDurableAsync(3);
        fixture.Disk = disk.ProcessCrash();
        await store.DisposeAsync();

        await using var reopened = await fixture.ReopenAsync("T");
        Assert.True(await Eventually.TrueAsync(() => reopened.GetState().Messages <= 2, TimeSpan.FromSeconds(15)), "the message with a time to live to expire");
        Assert.Null(Get(reopened, 2));
        Assert.NotNull(Get(reopened, 3));
        Assert.True(await Eventually.TrueAsync(() => reopened.GetState().Messages <= 1, TimeSpan.FromSeconds(15)), "the plain message to age out");
        Assert.NotNull(Get(reopened, 1));
        Assert.Equal(1UL, reopened.GetState().Messages);
    }

    private static StoreResult PutWith(IStreamStore store, string subject, TimeSpan timeToLive) =>
        store.Store(Encoding.UTF8.GetBytes(subject), ReadOnlySequence<byte>.Empty, new ReadOnlySequence<byte>("m"u8.ToArray()), new StoreOptions { TimeToLive = timeToLive });
}
