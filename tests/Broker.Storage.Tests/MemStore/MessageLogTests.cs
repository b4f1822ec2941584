using System.Text;
using Broker.Storage.MemStore.Internal;

namespace Broker.Storage.Tests.MemStore;

/// <summary>The memory store's message log: the sequence range and counters kept by appends and removals of every kind.</summary>
public sealed class MessageLogTests
{
    [Fact]
    public void Appends_set_the_range_and_the_counters()
    {
        var parts = new MemStoreParts();
        Assert.Equal(0UL, parts.Log.Count);
        Assert.Equal(1UL, parts.Append("a", "12345", timestamp: 100));
        Assert.Equal(2UL, parts.Append("b", "1", timestamp: 200));

        Assert.Equal(2UL, parts.Log.Count);
        Assert.Equal((ulong)(1 + 5 + 16 + 1 + 1 + 16), parts.Log.Bytes);
        Assert.Equal(1UL, parts.Log.First);
        Assert.Equal(100L, parts.Log.FirstTimestamp);
        Assert.Equal(2UL, parts.Log.Last);
        Assert.Equal(200L, parts.Log.LastTimestamp);
        Assert.True(parts.Log.TryGet(1, out var entry));
        Assert.Equal("12345", Encoding.UTF8.GetString(entry.Data, 0, entry.PayloadLength));
    }

    [Fact]
    public void Removing_the_first_moves_the_first_to_the_next_stored_message()
    {
        var parts = new MemStoreParts();
        for (var i = 0; i < 4; i++)
        {
            parts.Append("a", timestamp: 10 * (i + 1));
        }

        Assert.True(parts.Log.Remove(2, secureErase: false, parts.Subjects, null));
        Assert.True(parts.Log.Remove(1, secureErase: true, parts.Subjects, null));
        Assert.False(parts.Log.Remove(1, secureErase: false, parts.Subjects, null));

        Assert.Equal(3UL, parts.Log.First);
        Assert.Equal(30L, parts.Log.FirstTimestamp);
        Assert.Equal(2UL, parts.Log.Count);
        Assert.Equal(2UL, parts.Record("a").Messages);
    }

    [Fact]
    public void Removing_everything_leaves_the_first_one_past_the_last()
    {
        var parts = new MemStoreParts();
        parts.Append("a");
        parts.Append("b");
        var removed = RemovalBuffer.Rent();
        try
        {
            parts.Log.Remove(2, secureErase: false, parts.Subjects, removed);
            parts.Log.Remove(1, secureErase: false, parts.Subjects, removed);

            Assert.Equal(2, removed.Count);
            Assert.Equal(2UL, removed[0].Sequence);
            Assert.Equal(3UL, parts.Log.First);
            Assert.Equal(0UL, parts.Log.Bytes);
            Assert.Equal(0, parts.Subjects.Count);
        }
        finally
        {
            RemovalBuffer.Return(removed);
        }
    }

    [Fact]
    public void Skip_gives_out_a_sequence_and_an_empty_log_starts_after_it()
    {
        var parts = new MemStoreParts();
        Assert.Equal(1UL, parts.Log.Skip());
        Assert.Equal(1UL, parts.Log.Last);
        Assert.Equal(2UL, parts.Log.First);
        Assert.Equal(2UL, parts.Append("a"));
        Assert.Equal(2UL, parts.Log.First);
    }

    [Fact]
    public void RemoveBelow_compacts_and_unlinks_the_subjects()
    {
        var parts = new MemStoreParts();
        parts.Append("a", "1", timestamp: 1);
        parts.Append("b", "1", timestamp: 2);
        parts.Append("a", "1", timestamp: 3);
        parts.Log.Remove(3, secureErase: false, parts.Subjects, null);
        parts.Append("c", "1", timestamp: 4);

        var purged = parts.Log.RemoveBelow(3, parts.Subjects, out var bytes);

        Assert.Equal(2UL, purged);
        Assert.Equal(2UL * 18, bytes);
        Assert.Equal(4UL, parts.Log.First);
        Assert.Equal(4L, parts.Log.FirstTimestamp);
        Assert.Equal(1UL, parts.Log.Count);
        Assert.Null(parts.Subjects.Find("a"u8));
        Assert.Null(parts.Subjects.Find("b"u8));
    }

    [Fact]
    public void RemoveAbove_truncates_and_takes_the_time_of_the_kept_last()
    {
        var parts = new MemStoreParts();
        parts.Append("a", timestamp: 10);
        parts.Append("a", timestamp: 20);
        parts.Append("b", timestamp: 30);

        Assert.Equal(2UL, parts.Log.RemoveAbove(1, parts.Subjects, out _));
        Assert.Equal(1UL, parts.Log.Last);
        Assert.Equal(10L, parts.Log.LastTimestamp);
        Assert.Equal(1UL, parts.Record("a").Messages);
        Assert.Null(parts.Subjects.Find("b"u8));

        Assert.Equal(1UL, parts.Log.RemoveAbove(0, parts.Subjects, out var bytes));
        Assert.Equal(18UL, bytes);
        Assert.Equal(0UL, parts.Log.Count);
        Assert.Equal(1UL, parts.Log.First);
    }

    [Fact]
    public void Sequence_from_time_steps_over_deleted_sequences()
    {
        var parts = new MemStoreParts();
        for (var i = 1; i <= 6; i++)
        {
            parts.Append("a", timestamp: i * 100);
        }

        parts.Log.Remove(3, secureErase: false, parts.Subjects, null);
        parts.Log.Remove(4, secureErase: false, parts.Subjects, null);

        Assert.Equal(1UL, parts.Log.SequenceFromTime(50));
        Assert.Equal(5UL, parts.Log.SequenceFromTime(250));
        Assert.Equal(5UL, parts.Log.SequenceFromTime(500));
        Assert.Equal(6UL, parts.Log.SequenceFromTime(501));
        Assert.Equal(7UL, parts.Log.SequenceFromTime(601));
        Assert.Equal([3UL, 4UL], parts.Log.DeletedSequences());
        var state = parts.Log.State(parts.Subjects.Count);
        Assert.Equal(2, state.DeletedCount);
    }

    [Fact]
    public void Scans_find_and_count_by_subject_or_filter()
    {
        var parts = new MemStoreParts();
        parts.Append("foo.a");
        parts.Append("bar");
        parts.Append("foo.b");
        parts.Append("foo.a");

        Assert.Equal(3UL, parts.Log.FindFirst(2, 4, null, "foo.*"u8, all: false, out var found));
        Assert.Equal("foo.b", found.Subject.Text);
        Assert.Equal(0UL, parts.Log.FindFirst(2, 3, parts.Record("foo.a"), default, all: false, out _));
        Assert.Equal(new Broker.Abstractions.SubjectState(3, 1, 4), parts.Log.CountRange(1, 4, null, "foo.>"u8, all: false));
        Assert.Equal(4UL, parts.Log.LastOf(parts.Record("foo.a"), 4, 1));
        Assert.Equal(1UL, parts.Log.FirstOf(parts.Record("foo.a"), 1, 4));
        parts.Log.Remove(4, secureErase: false, parts.Subjects, null);
        Assert.Equal(3UL, parts.Log.LastStored());
    }
}
