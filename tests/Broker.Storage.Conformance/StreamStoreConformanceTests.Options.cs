using System.Buffers;
using System.Text;
using Broker.Abstractions;
using Xunit;

namespace Broker.Storage.Conformance;

/// <summary>
/// Contract 1.4's appends with <see cref="StoreOptions"/>: a given store time (mirrors keep their origin's, restores the
/// snapshot's), checked for stores whose provider declares <see cref="StoreFeatures.Timestamps"/>; what a store does not
/// declare it refuses rather than half-does.
/// </summary>
public abstract partial class StreamStoreConformanceTests
{
    private static readonly long HourAgo = (DateTime.UtcNow.AddHours(-1).Ticks - DateTime.UnixEpoch.Ticks) * 100;

    /// <summary>What the provider under test declares.</summary>
    protected StoreFeatures Features => CreateProvider().Features;

    protected static StoreResult StoreWith(IStreamStore store, string subject, string payload, in StoreOptions options) =>
        store.Store(Encoding.UTF8.GetBytes(subject), ReadOnlySequence<byte>.Empty, new ReadOnlySequence<byte>(Encoding.UTF8.GetBytes(payload)), options);

    [Fact(Timeout = Timeout)]
    public async Task A_given_timestamp_is_kept_and_found_by_time()
    {
        if (!Features.HasFlag(StoreFeatures.Timestamps))
        {
            return;
        }

        var store = await CreateAsync();
        var first = StoreWith(store, "foo.a", "old", new StoreOptions { Timestamp = HourAgo });
        var second = StoreWith(store, "foo.b", "later", new StoreOptions { Timestamp = HourAgo + 1_000_000 });
        Assert.Equal((StoreStatus.Stored, 1UL, HourAgo), (first.Status, first.Sequence, first.Timestamp));
        Assert.Equal(HourAgo + 1_000_000, second.Timestamp);

        var message = new StoredMessage();
        Assert.Equal(LoadStatus.Found, store.Load(1, message));
        Assert.Equal(HourAgo, message.Timestamp);
        Assert.Equal(2UL, store.GetSequenceFromTime(HourAgo + 1));
        Assert.Equal(1UL, store.GetSequenceFromTime(HourAgo - 1));

        // The default options take the current time, after both.
        var now = Store(store, "foo.a", "now");
        Assert.True(now.Timestamp > HourAgo + 30L * 60 * 1_000_000_000, "the current time");
    }

    [Fact(Timeout = Timeout)]
    public async Task A_timestamp_before_the_last_is_raised_to_it()
    {
        if (!Features.HasFlag(StoreFeatures.Timestamps))
        {
            return;
        }

        var store = await CreateAsync();
        var latest = StoreWith(store, "foo.a", "1", new StoreOptions { Timestamp = HourAgo + 5_000 });
        var earlier = StoreWith(store, "foo.a", "2", new StoreOptions { Timestamp = HourAgo });
        Assert.Equal(StoreStatus.Stored, earlier.Status);
        Assert.Equal(latest.Timestamp, earlier.Timestamp);
        var message = new StoredMessage();
        Assert.Equal(LoadStatus.Found, store.Load(2, message));
        Assert.Equal(latest.Timestamp, message.Timestamp);
    }

    [Fact(Timeout = Timeout)]
    public async Task MaxAge_counts_from_a_given_timestamp()
    {
        if (!Features.HasFlag(StoreFeatures.Timestamps))
        {
            return;
        }

        var store = await CreateAsync(NewConfig() with { MaxAge = TimeSpan.FromMinutes(10) });
        Assert.Equal(StoreStatus.Stored, StoreWith(store, "foo.a", "stale", new StoreOptions { Timestamp = HourAgo }).Status);
        Assert.Equal(StoreStatus.Stored, Store(store, "foo.a", "fresh").Status);

        var deadline = DateTime.UtcNow + TimeSpan.FromSeconds(10);
        while (store.GetState().Messages > 1 && DateTime.UtcNow < deadline)
        {
            await Task.Delay(50);
        }

        var state = store.GetState();
        Assert.Equal(1UL, state.Messages);
        Assert.Equal(2UL, state.FirstSequence);
    }

    [Fact(Timeout = Timeout)]
    public async Task A_durable_store_recovers_given_timestamps()
    {
        if (!IsDurable || !Features.HasFlag(StoreFeatures.Timestamps))
        {
            return;
        }

        var provider = CreateProvider();
        var store = await provider.CreateAsync(NewConfig("TIMES"));
        StoreWith(store, "foo.a", "old", new StoreOptions { Timestamp = HourAgo });
        await store.FlushAsync();
        await store.DisposeAsync();

        var recovered = await provider.RecoverAsync(new StoreRecoveryContext("$G", Path.Combine(StoreDirectory, "$G", "streams")));
        opened.AddRange(recovered);
        var again = Assert.Single(recovered, s => s.Config.Name == "TIMES");
        var message = new StoredMessage();
        Assert.Equal(LoadStatus.Found, again.Load(1, message));
        Assert.Equal(HourAgo, message.Timestamp);
        Assert.Equal(HourAgo, again.GetState().FirstTimestamp);
    }

    [Fact(Timeout = Timeout)]
    public async Task A_time_to_live_is_refused_unless_declared()
    {
        if (Features.HasFlag(StoreFeatures.MessageTtl))
        {
            return;
        }

        var store = await CreateAsync();
        var result = StoreWith(store, "foo.a", "ttl", new StoreOptions { TimeToLive = TimeSpan.FromSeconds(5) });
        Assert.Equal((StoreStatus.NotSupported, 0UL), (result.Status, result.Sequence));
        Assert.Equal(0UL, store.GetState().LastSequence);
    }
}
