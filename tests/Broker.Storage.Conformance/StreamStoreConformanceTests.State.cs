using Broker.Abstractions;
using Xunit;

namespace Broker.Storage.Conformance;

/// <summary>State queries: filtered state, subjects state, num pending, byte accounting and the update handler.</summary>
public abstract partial class StreamStoreConformanceTests
{
    [Fact(Timeout = Timeout)]
    public async Task FilteredState_counts_matches_from_a_start_sequence()
    {
        var store = await CreateAsync();
        Store(store, "foo.a", "1");
        Store(store, "foo.b", "2");
        Store(store, "bar", "3");
        Store(store, "foo.a", "4");
        Store(store, "foo.c.d", "5");

        Assert.Equal(new SubjectState(2, 1, 4), store.GetFilteredState(0, "foo.a"u8));
        Assert.Equal(new SubjectState(1, 4, 4), store.GetFilteredState(2, "foo.a"u8));
        Assert.Equal(new SubjectState(3, 1, 4), store.GetFilteredState(1, "foo.*"u8));
        Assert.Equal(new SubjectState(2, 2, 4), store.GetFilteredState(2, "foo.*"u8));
        Assert.Equal(new SubjectState(4, 1, 5), store.GetFilteredState(1, "foo.>"u8));
        Assert.Equal(new SubjectState(5, 1, 5), store.GetFilteredState(0, default));
        Assert.Equal(new SubjectState(3, 3, 5), store.GetFilteredState(3, ">"u8));
        Assert.Equal(default, store.GetFilteredState(6, default));
        Assert.Equal(default, store.GetFilteredState(1, "nope"u8));
    }

    [Fact(Timeout = Timeout)]
    public async Task SubjectsState_lists_each_matching_subject()
    {
        var store = await CreateAsync();
        Store(store, "foo.a", "1");
        Store(store, "foo.b", "2");
        Store(store, "foo.a", "3");
        Store(store, "bar", "4");

        var all = store.GetSubjectsState("");
        Assert.Equal(3, all.Count);
        Assert.Equal(new SubjectState(2, 1, 3), all["foo.a"]);
        Assert.Equal(new SubjectState(1, 4, 4), all["bar"]);

        var filtered = store.GetSubjectsState("foo.*");
        Assert.Equal(["foo.a", "foo.b"], filtered.Keys.Order(StringComparer.Ordinal));

        store.Remove(1);
        Assert.Equal(new SubjectState(1, 3, 3), store.GetSubjectsState("foo.a")["foo.a"]);
    }

    [Fact(Timeout = Timeout)]
    public async Task NumPending_counts_messages_or_last_per_subject()
    {
        var store = await CreateAsync();
        Store(store, "foo.a", "1");
        Store(store, "foo.b", "2");
        Store(store, "foo.a", "3");
        Store(store, "bar", "4");

        Assert.Equal(new PendingCount(4, 4), store.NumPending(1, default, false));
        Assert.Equal(new PendingCount(2, 4), store.NumPending(2, "foo.*"u8, false));
        Assert.Equal(new PendingCount(2, 4), store.NumPending(1, "foo.*"u8, true));
        Assert.Equal(new PendingCount(3, 4), store.NumPending(1, default, true));
        Assert.Equal(new PendingCount(0, 4), store.NumPending(5, default, false));
    }

    [Fact(Timeout = Timeout)]
    public async Task Bytes_follow_appends_and_removals()
    {
        var store = await CreateAsync();
        Store(store, "foo.a", "12345");
        var one = store.GetState().Bytes;
        Assert.True(one >= MemorySize("foo.a", "12345"));
        Store(store, "foo.a", "12345");
        Assert.Equal(2 * one, store.GetState().Bytes);
        store.Remove(1);
        Assert.Equal(one, store.GetState().Bytes);
        store.Purge();
        Assert.Equal(0UL, store.GetState().Bytes);
    }

    [Fact(Timeout = Timeout)]
    public async Task The_update_handler_hears_appends_removals_and_bulk_changes()
    {
        var store = await CreateAsync(NewConfig() with { MaxMessages = 2 });
        var events = new List<(long Messages, long Bytes, ulong Sequence, string Subject)>();
        store.RegisterStorageUpdates((messages, bytes, sequence, subject) =>
        {
            lock (events)
            {
                events.Add((messages, bytes, sequence, System.Text.Encoding.UTF8.GetString(subject)));
            }
        });

        Store(store, "foo.a", "1");
        Store(store, "foo.b", "2");
        Store(store, "foo.c", "3");
        store.Remove(3);
        Store(store, "foo.d", "4");
        store.Purge();

        lock (events)
        {
            Assert.Equal((1L, 1UL, "foo.a"), (events[0].Messages, events[0].Sequence, events[0].Subject));
            Assert.Contains(events, e => e is { Messages: -1, Sequence: 1, Subject: "foo.a" });
            Assert.Contains(events, e => e is { Messages: -1, Sequence: 3, Subject: "foo.c" });
            var last = events[^1];
            Assert.Equal((-2L, 0UL, ""), (last.Messages, last.Sequence, last.Subject));
            Assert.Equal(0L, events.Sum(e => e.Messages));
            Assert.Equal(0L, events.Sum(e => e.Bytes));
            Assert.True(events.Where(e => e.Messages > 0).All(e => e.Bytes > 0));
        }
    }

    [Fact(Timeout = Timeout)]
    public async Task The_update_handler_may_call_back_into_the_store()
    {
        var store = await CreateAsync(NewConfig() with { MaxMessages = 1 });
        var seen = new List<ulong>();
        store.RegisterStorageUpdates((messages, _, sequence, _) =>
        {
            // Another thread's lock order would deadlock here if the store held its own lock.
            var state = Task.Run(store.GetState).Result;
            lock (seen)
            {
                seen.Add(state.LastSequence);
            }
        });

        StoreMany(store, "foo.a", 3);
        Assert.NotEmpty(seen);
    }
}
