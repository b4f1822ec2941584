using Broker.Abstractions;
using Xunit;

namespace Broker.Storage.Conformance;

/// <summary>
/// Contract 1.4's message time to live (<see cref="StoreOptions.TimeToLive"/>, nats-server 2.11's <c>Nats-TTL</c>), for
/// stores whose provider declares <see cref="StoreFeatures.MessageTtl"/>: a message goes when its time has passed
/// (also after a restart of a durable store), told to the update handler as <c>max_age</c>'s removals are; "never"
/// outlives <c>max_age</c>; a time longer than <c>max_age</c> does not (nats-server 2.11's <c>expireMsgs</c> spares only
/// "never").
/// </summary>
public abstract partial class StreamStoreConformanceTests
{
    private static readonly StoreOptions OneSecond = new() { TimeToLive = TimeSpan.FromSeconds(1) };
    private static readonly StoreOptions Never = new() { TimeToLive = System.Threading.Timeout.InfiniteTimeSpan };

    /// <summary>Polls until <paramref name="done"/> holds or 15 s have passed; the caller asserts what it waited for.</summary>
    protected static async Task WaitUntil(Func<bool> done)
    {
        var deadline = DateTime.UtcNow + TimeSpan.FromSeconds(15);
        while (!done() && DateTime.UtcNow < deadline)
        {
            await Task.Delay(50);
        }
    }

    [Fact(Timeout = Timeout)]
    public async Task A_message_goes_when_its_time_to_live_has_passed_and_the_handler_hears_it()
    {
        if (!Features.HasFlag(StoreFeatures.MessageTtl))
        {
            return;
        }

        var store = await CreateAsync();
        var removals = new List<(ulong Sequence, string Subject)>();
        store.RegisterStorageUpdates((messages, _, sequence, subject) =>
        {
            if (messages < 0)
            {
                lock (removals)
                {
                    removals.Add((sequence, System.Text.Encoding.UTF8.GetString(subject)));
                }
            }
        });

        var stored = StoreWith(store, "foo.a", "short", OneSecond);
        Assert.Equal((StoreStatus.Stored, 1UL), (stored.Status, stored.Sequence));
        Store(store, "foo.b", "kept");
        Assert.Equal(2UL, store.GetState().Messages);

        await WaitUntil(() => store.GetState().Messages == 1);
        var state = store.GetState();
        Assert.Equal((1UL, 2UL), (state.Messages, state.FirstSequence));
        Assert.Equal(LoadStatus.NotFound, store.Load(1, new StoredMessage()));
        lock (removals)
        {
            Assert.Equal([(1UL, "foo.a")], removals);
        }
    }

    [Fact(Timeout = Timeout)]
    public async Task A_time_to_live_counts_from_a_given_timestamp()
    {
        if (!Features.HasFlag(StoreFeatures.MessageTtl) || !Features.HasFlag(StoreFeatures.Timestamps))
        {
            return;
        }

        var store = await CreateAsync();
        StoreWith(store, "foo.a", "an hour old, for half an hour", new StoreOptions { Timestamp = HourAgo, TimeToLive = TimeSpan.FromMinutes(30) });
        StoreWith(store, "foo.a", "an hour old, for two", new StoreOptions { Timestamp = HourAgo, TimeToLive = TimeSpan.FromHours(2) });

        await WaitUntil(() => store.GetState().Messages == 1);
        Assert.Equal((1UL, 2UL), (store.GetState().Messages, store.GetState().FirstSequence));
    }

    [Fact(Timeout = Timeout)]
    public async Task Never_outlives_max_age_and_a_longer_time_to_live_does_not()
    {
        if (!Features.HasFlag(StoreFeatures.MessageTtl))
        {
            return;
        }

        var store = await CreateAsync(NewConfig() with { MaxAge = TimeSpan.FromSeconds(1) });
        StoreWith(store, "foo.a", "never", Never);
        StoreWith(store, "foo.b", "an hour", new StoreOptions { TimeToLive = TimeSpan.FromHours(1) });
        Store(store, "foo.c", "plain");
        StoreWith(store, "foo.d", "never again", Never);

        await WaitUntil(() => store.GetState().Messages == 2);
        var message = new StoredMessage();
        Assert.Equal(LoadStatus.Found, store.Load(1, message));
        Assert.Equal(LoadStatus.NotFound, store.Load(2, message));
        Assert.Equal(LoadStatus.NotFound, store.Load(3, message));
        Assert.Equal(LoadStatus.Found, store.Load(4, message));
        Assert.Equal(2UL, store.GetState().Messages);
    }

    [Fact(Timeout = Timeout)]
    public async Task A_truncation_forgets_the_times_to_live_above_it()
    {
        if (!Features.HasFlag(StoreFeatures.MessageTtl))
        {
            return;
        }

        var store = await CreateAsync();
        StoreWith(store, "foo.a", "short", OneSecond);
        Store(store, "foo.a", "plain");
        store.Truncate(0);

        // Sequence 1 again, now without a time to live; sequence 2 expires after its old entry was due.
        Store(store, "foo.a", "again");
        StoreWith(store, "foo.b", "short", new StoreOptions { TimeToLive = TimeSpan.FromSeconds(2) });
        await WaitUntil(() => store.GetState().Messages == 1);
        Assert.Equal(LoadStatus.Found, store.Load(1, new StoredMessage()));
        Assert.Equal(1UL, store.GetState().Messages);
    }

    [Fact(Timeout = Timeout)]
    public async Task A_durable_store_expires_after_a_restart()
    {
        if (!IsDurable || !Features.HasFlag(StoreFeatures.MessageTtl))
        {
            return;
        }

        var provider = CreateProvider();
        var store = await provider.CreateAsync(NewConfig("TTLS") with { MaxAge = TimeSpan.FromSeconds(6) });
        StoreWith(store, "foo.a", "never", Never);
        StoreWith(store, "foo.b", "short", new StoreOptions { TimeToLive = TimeSpan.FromSeconds(1) });
        Store(store, "foo.c", "plain");
        await store.FlushAsync();
        await store.DisposeAsync();

        var recovered = await provider.RecoverAsync(new StoreRecoveryContext("$G", Path.Combine(StoreDirectory, "$G", "streams")));
        opened.AddRange(recovered);
        var again = Assert.Single(recovered, s => s.Config.Name == "TTLS");
        await WaitUntil(() => again.GetState().Messages == 2);
        var message = new StoredMessage();
        Assert.Equal(LoadStatus.NotFound, again.Load(2, message));
        Assert.Equal(LoadStatus.Found, again.Load(3, message));

        await WaitUntil(() => again.GetState().Messages == 1);
        Assert.Equal(LoadStatus.Found, again.Load(1, message));
        Assert.Equal(LoadStatus.NotFound, again.Load(3, message));

        // Once more, from what the running store wrote (its checkpoint or records).
        await again.FlushAsync();
        await again.DisposeAsync();
        var third = await provider.RecoverAsync(new StoreRecoveryContext("$G", Path.Combine(StoreDirectory, "$G", "streams")));
        opened.AddRange(third);
        var last = Assert.Single(third, s => s.Config.Name == "TTLS");
        StoreWith(last, "foo.e", "short", OneSecond);
        await WaitUntil(() => last.GetState().Messages == 1 && last.GetState().LastSequence == 4);
        Assert.Equal(LoadStatus.Found, last.Load(1, message));
        Assert.Equal(1UL, last.GetState().Messages);
    }
}
