using Broker.Abstractions;
using Xunit;

namespace Broker.Storage.Conformance;

/// <summary>Removals: single messages, purges (all, by subject, keep, up to a sequence), compaction, truncation.</summary>
public abstract partial class StreamStoreConformanceTests
{
    [Fact(Timeout = Timeout)]
    public async Task Remove_of_the_first_message_moves_the_first_sequence()
    {
        var store = await CreateAsync();
        StoreMany(store, "foo.a", 3);
        Assert.True(store.Remove(1));
        Assert.False(store.Remove(1));
        Assert.False(store.Remove(9));

        var state = store.GetState();
        Assert.Equal(2UL, state.Messages);
        Assert.Equal(2UL, state.FirstSequence);
        Assert.Equal(0, state.DeletedCount);
    }

    [Fact(Timeout = Timeout)]
    public async Task Interior_removes_are_counted_and_listed_as_deleted()
    {
        var store = await CreateAsync();
        StoreMany(store, "foo.a", 6);
        store.Remove(2);
        store.Remove(4, secureErase: true);

        var state = store.GetState();
        Assert.Equal(4UL, state.Messages);
        Assert.Equal(2, state.DeletedCount);
        Assert.Equal([2UL, 4UL], store.GetDeletedSequences());
        Assert.True(state.Bytes >= 4 * MemorySize("foo.a", "m0"), "bytes count at least subject, headers, payload and 16 per message");
    }

    [Fact(Timeout = Timeout)]
    public async Task Removing_the_last_message_empties_the_stream_but_keeps_the_sequence()
    {
        var store = await CreateAsync();
        StoreMany(store, "foo.a", 2);
        store.Remove(1);
        store.Remove(2);

        var state = store.GetState();
        Assert.Equal(0UL, state.Messages);
        Assert.Equal(0UL, state.Bytes);
        Assert.Equal(3UL, state.FirstSequence);
        Assert.Equal(2UL, state.LastSequence);
        Assert.Equal(0, state.SubjectCount);
        Assert.Equal(3UL, Store(store, "foo.a", "x").Sequence);
    }

    [Fact(Timeout = Timeout)]
    public async Task Purge_removes_everything_and_continues_the_sequence()
    {
        var store = await CreateAsync();
        StoreMany(store, "foo.a", 10);
        Assert.Equal(10UL, store.Purge());

        var state = store.GetState();
        Assert.Equal(0UL, state.Messages);
        Assert.Equal(0UL, state.Bytes);
        Assert.Equal(11UL, state.FirstSequence);
        Assert.Equal(10UL, state.LastSequence);
        Assert.Equal(11UL, Store(store, "foo.a", "x").Sequence);
    }

    [Fact(Timeout = Timeout)]
    public async Task Purge_by_subject_removes_only_that_subject()
    {
        var store = await CreateAsync();
        for (var i = 0; i < 5; i++)
        {
            Store(store, "foo.a", "a");
            Store(store, "foo.b", "b");
        }

        Assert.Equal(5UL, store.Purge("foo.a", 0, 0));
        Assert.Equal(5UL, store.GetState().Messages);
        Assert.Equal(0UL, store.GetFilteredState(0, "foo.a"u8).Messages);
        Assert.Equal(5UL, store.GetFilteredState(0, "foo.b"u8).Messages);
        Assert.Equal(2UL, store.GetState().FirstSequence);
    }

    [Fact(Timeout = Timeout)]
    public async Task Purge_with_keep_leaves_the_newest()
    {
        var store = await CreateAsync();
        for (var i = 0; i < 5; i++)
        {
            Store(store, "foo.a", "a" + i);
            Store(store, "foo.b", "b" + i);
        }

        Assert.Equal(3UL, store.Purge("foo.a", 0, 2));
        Assert.Equal(new SubjectState(2, 7, 9), store.GetFilteredState(0, "foo.a"u8));

        // Without a subject, keep applies to the whole stream.
        Assert.Equal(4UL, store.Purge("", 0, 3));
        var state = store.GetState();
        Assert.Equal(3UL, state.Messages);
        Assert.Equal(8UL, state.FirstSequence);
        Assert.Equal(0UL, store.Purge("foo.b", 0, 10));
    }

    [Fact(Timeout = Timeout)]
    public async Task Purge_up_to_a_sequence_keeps_that_sequence_and_later()
    {
        var store = await CreateAsync();
        for (var i = 0; i < 5; i++)
        {
            Store(store, "foo.a", "a");
            Store(store, "foo.b", "b");
        }

        // foo.a sits at odd sequences: 1, 3, 5 are below 6.
        Assert.Equal(3UL, store.Purge("foo.a", 6, 0));
        Assert.Equal(new SubjectState(2, 7, 9), store.GetFilteredState(0, "foo.a"u8));

        Assert.Equal(5UL, store.Purge("", 9, 0));
        Assert.Equal(9UL, store.GetState().FirstSequence);
    }

    [Fact(Timeout = Timeout)]
    public async Task Purge_with_a_wildcard_filter_removes_every_match()
    {
        var store = await CreateAsync();
        Store(store, "foo.a", "1");
        Store(store, "bar", "2");
        Store(store, "foo.b", "3");
        Assert.Equal(2UL, store.Purge("foo.*", 0, 0));
        Assert.Equal(1UL, store.GetState().Messages);
    }

    [Fact(Timeout = Timeout)]
    public async Task Compact_removes_below_a_sequence()
    {
        var store = await CreateAsync();
        StoreMany(store, "foo.a", 10);
        Assert.Equal(4UL, store.Compact(5));
        var state = store.GetState();
        Assert.Equal(6UL, state.Messages);
        Assert.Equal(5UL, state.FirstSequence);
        Assert.Equal(0UL, store.Compact(3));
    }

    [Fact(Timeout = Timeout)]
    public async Task Compact_past_the_end_sets_the_next_sequence()
    {
        var store = await CreateAsync();
        StoreMany(store, "foo.a", 3);
        Assert.Equal(3UL, store.Compact(100));
        var state = store.GetState();
        Assert.Equal(0UL, state.Messages);
        Assert.Equal(100UL, state.FirstSequence);
        Assert.Equal(99UL, state.LastSequence);
        Assert.Equal(100UL, Store(store, "foo.a", "x").Sequence);
    }

    [Fact(Timeout = Timeout)]
    public async Task Truncate_removes_above_a_sequence()
    {
        var store = await CreateAsync();
        Store(store, "foo.a", "1");
        Store(store, "foo.b", "2");
        Store(store, "foo.a", "3");
        Store(store, "foo.b", "4");
        store.Truncate(2);

        var state = store.GetState();
        Assert.Equal(2UL, state.Messages);
        Assert.Equal(2UL, state.LastSequence);
        Assert.Equal(3UL, Store(store, "foo.c", "x").Sequence);
        var message = new StoredMessage();
        Assert.Equal(LoadStatus.Found, store.LoadLast("foo.a"u8, message));
        Assert.Equal(1UL, message.Sequence);

        store.Truncate(0);
        state = store.GetState();
        Assert.Equal(0UL, state.Messages);
        Assert.Equal(0UL, state.LastSequence);
        Assert.Equal(1UL, Store(store, "foo.a", "again").Sequence);
    }
}
