using Broker.Abstractions;
using Broker.JetStream.Internal.Consumers;
using Broker.JetStream.Internal.Json;
using Broker.JetStream.Internal.Models;

namespace Broker.JetStream.Tests.Consumers;

/// <summary>The consumer's position in its stream: filters, starting sequence, next match, pending count.</summary>
public sealed class StreamCursorTests
{
    [Fact(Timeout = 10_000)]
    public async Task Filters_match_subjects_and_overlap_purge_filters()
    {
        var cursor = new StreamCursor(await ConsumerParts.StreamStoreAsync());
        Assert.True(cursor.Matches("anything"u8));
        cursor.SetFilters(new ConsumerConfig { FilterSubjects = ["orders.*", "audit.>"] });
        Assert.True(cursor.Matches("orders.1"u8));
        Assert.True(cursor.Matches("audit.x.y"u8));
        Assert.False(cursor.Matches("orders.1.2"u8));
        Assert.True(cursor.MatchesFilter("orders.>"u8));
        Assert.False(cursor.MatchesFilter("billing.>"u8));
        cursor.SetFilters(new ConsumerConfig { FilterSubjects = ["a", ">"] });
        Assert.True(cursor.Matches("billing"u8));
    }

    [Fact(Timeout = 10_000)]
    public async Task Each_deliver_policy_selects_its_start()
    {
        var store = await ConsumerParts.StreamStoreAsync("a", "b", "a", "c");
        Assert.Equal(0UL, Start(store, new ConsumerConfig { DeliverPolicy = DeliverPolicy.All }).Floor);
        Assert.Equal(5UL, Start(store, new ConsumerConfig { DeliverPolicy = DeliverPolicy.New }).Next);
        Assert.Equal(4UL, Start(store, new ConsumerConfig { DeliverPolicy = DeliverPolicy.Last }).Next);
        Assert.Equal(3UL, Start(store, new ConsumerConfig { DeliverPolicy = DeliverPolicy.Last, FilterSubject = "a" }).Next);
        Assert.Equal(2UL, Start(store, new ConsumerConfig { DeliverPolicy = DeliverPolicy.ByStartSequence, OptStartSeq = 2 }).Next);
        Assert.Equal(5UL, Start(store, new ConsumerConfig { DeliverPolicy = DeliverPolicy.ByStartSequence, OptStartSeq = 99 }).Next);
    }

    [Fact(Timeout = 10_000)]
    public async Task Last_per_subject_delivers_each_subjects_last_then_resumes_after_the_stream_end()
    {
        var store = await ConsumerParts.StreamStoreAsync("a", "b", "a", "c");
        var cursor = new StreamCursor(store);
        var config = new ConsumerConfig { DeliverPolicy = DeliverPolicy.LastPerSubject };
        cursor.SetFilters(config);
        cursor.SelectStart(config);
        Assert.Equal(3UL, cursor.NumPending());

        var message = new StoredMessage();
        var seen = new List<ulong>();
        while (cursor.TryLoadFromSkipList(message))
        {
            seen.Add(message.Sequence);
        }

        Assert.Equal([2UL, 3UL, 4UL], seen);
        Assert.Equal(5UL, cursor.StreamSequence);
        store.Store("d"u8, default, default);
        Assert.True(cursor.TryLoadNext(message));
        Assert.Equal(5UL, message.Sequence);
    }

    [Fact(Timeout = 10_000)]
    public async Task The_next_match_of_several_filters_is_the_nearest_and_the_position_moves_past_it()
    {
        var store = await ConsumerParts.StreamStoreAsync("x", "b", "x", "a", "b");
        var cursor = new StreamCursor(store);
        var config = new ConsumerConfig { DeliverPolicy = DeliverPolicy.All, FilterSubjects = ["a", "b"] };
        cursor.SetFilters(config);
        cursor.SelectStart(config);
        var message = new StoredMessage();
        var seen = new List<ulong>();
        while (cursor.TryLoadNext(message))
        {
            seen.Add(message.Sequence);
            Assert.Equal(seen.Count, (int)cursor.TakeDeliverySequence());
        }

        Assert.Equal([2UL, 4UL, 5UL], seen);
        Assert.Equal(new SequencePair(3, 5), cursor.Delivered);

        cursor.Rewind(4);
        Assert.True(cursor.TryLoadNext(message));
        Assert.Equal(4UL, message.Sequence);
    }

    [Fact(Timeout = 10_000)]
    public async Task The_pending_count_follows_stores_deliveries_and_removals()
    {
        var store = await ConsumerParts.StreamStoreAsync("a", "b", "a");
        var cursor = new StreamCursor(store);
        var config = new ConsumerConfig { DeliverPolicy = DeliverPolicy.All, FilterSubject = "a" };
        cursor.SetFilters(config);
        cursor.SelectStart(config);
        Assert.Equal(2UL, cursor.NumPending());

        store.Store("a"u8, default, default);
        cursor.OnStored(4);
        Assert.Equal(3UL, cursor.NumPending());

        Assert.True(cursor.CountOff(1));
        Assert.Equal(2UL, cursor.NumPending());
        cursor.Uncount();
        Assert.Equal(3UL, cursor.NumPending());

        Assert.True(cursor.OnRemoved(3, matches: true, messages: -1));
        Assert.Equal(2UL, cursor.NumPending());
        Assert.False(cursor.OnRemoved(0, matches: false, messages: 5), "several at once: the count is computed again");
        store.Remove(3);
        Assert.Equal(2UL, cursor.NumPending());
    }

    [Fact(Timeout = 10_000)]
    public async Task Restore_and_purge_move_the_position()
    {
        var cursor = new StreamCursor(await ConsumerParts.StreamStoreAsync("a", "b"));
        cursor.Restore(new ConsumerState { Delivered = new SequencePair(7, 9) });
        Assert.Equal(8UL, cursor.DeliverySequence);
        Assert.Equal(10UL, cursor.StreamSequence);
        cursor.SkipTo(5);
        Assert.Equal(10UL, cursor.StreamSequence);
        cursor.SkipTo(20);
        Assert.Equal(20UL, cursor.StreamSequence);
    }

    private static (ulong Floor, ulong Next) Start(IStreamStore store, ConsumerConfig config)
    {
        var cursor = new StreamCursor(store);
        cursor.SetFilters(config);
        var floor = cursor.SelectStart(config);
        return (floor, cursor.StreamSequence);
    }
}
