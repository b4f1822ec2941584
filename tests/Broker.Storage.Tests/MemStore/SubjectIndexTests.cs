using Broker.Abstractions;

namespace Broker.Storage.Tests.MemStore;

/// <summary>The memory store's subject index: per-subject counts, the lazily recomputed first and last, and the queries answered from them.</summary>
public sealed class SubjectIndexTests
{
    [Fact]
    public void A_subject_counts_its_messages_and_goes_with_its_last()
    {
        var parts = new MemStoreParts();
        parts.Append("a");
        parts.Append("b");
        parts.Append("a");

        var a = parts.Record("a");
        Assert.Equal((2UL, 1UL, 3UL), (a.Messages, a.First, a.Last));
        Assert.Equal(2, parts.Subjects.Count);

        parts.Log.Remove(1, secureErase: false, parts.Subjects, null);
        parts.Log.Remove(3, secureErase: false, parts.Subjects, null);
        Assert.Null(parts.Subjects.Find("a"u8));
        Assert.Equal(0UL, a.Messages);
        Assert.Equal(1, parts.Subjects.Count);
    }

    [Fact]
    public void With_one_message_left_the_end_not_removed_is_both_ends()
    {
        var parts = new MemStoreParts();
        parts.Append("a");
        parts.Append("a");
        parts.Log.Remove(1, secureErase: false, parts.Subjects, null);

        var a = parts.Record("a");
        Assert.Equal((1UL, 2UL, 2UL), (a.Messages, a.First, a.Last));
        Assert.False(a.FirstNeedsUpdate);
        Assert.False(a.LastNeedsUpdate);
    }

    [Fact]
    public void A_removed_end_is_marked_stale_and_recomputed_on_demand()
    {
        var parts = new MemStoreParts();
        parts.Append("a");
        parts.Append("b");
        parts.Append("a");
        parts.Append("a");
        parts.Append("b");
        parts.Append("a");

        parts.Log.Remove(1, secureErase: false, parts.Subjects, null);
        parts.Log.Remove(6, secureErase: false, parts.Subjects, null);
        var a = parts.Record("a");
        Assert.True(a.FirstNeedsUpdate);
        Assert.True(a.LastNeedsUpdate);

        parts.Subjects.Refresh(a);
        Assert.Equal((2UL, 3UL, 4UL), (a.Messages, a.First, a.Last));
        Assert.False(a.FirstNeedsUpdate);
        Assert.False(a.LastNeedsUpdate);
    }

    [Fact]
    public void Filtered_state_counts_whole_subjects_and_scans_when_the_start_falls_inside_one()
    {
        var parts = new MemStoreParts();
        parts.Append("foo.a");
        parts.Append("foo.b");
        parts.Append("bar");
        parts.Append("foo.a");

        Assert.Equal(new SubjectState(4, 1, 4), parts.Subjects.FilteredState(0, ">"u8));
        Assert.Equal(new SubjectState(2, 3, 4), parts.Subjects.FilteredState(3, ">"u8));
        Assert.Equal(new SubjectState(2, 1, 4), parts.Subjects.FilteredState(1, "foo.a"u8));
        Assert.Equal(new SubjectState(1, 4, 4), parts.Subjects.FilteredState(2, "foo.a"u8));
        Assert.Equal(new SubjectState(3, 1, 4), parts.Subjects.FilteredState(1, "foo.*"u8));
        Assert.Equal(new SubjectState(2, 2, 4), parts.Subjects.FilteredState(2, "foo.*"u8));
        Assert.Equal(default, parts.Subjects.FilteredState(1, "baz"u8));
        Assert.Equal(default, parts.Subjects.FilteredState(5, ">"u8));
    }

    [Fact]
    public void Subjects_state_last_per_subject_and_last_sequence()
    {
        var parts = new MemStoreParts();
        parts.Append("foo.a");
        parts.Append("foo.b");
        parts.Append("foo.a");
        parts.Append("bar");

        var state = parts.Subjects.SubjectsState("foo.*"u8);
        Assert.Equal(2, state.Count);
        Assert.Equal(new SubjectState(2, 1, 3), state["foo.a"]);
        Assert.Equal(1UL, parts.Subjects.CountLastAtOrAfter(3, "foo.*"u8));
        Assert.Equal(2UL, parts.Subjects.CountLastAtOrAfter(2, "foo.*"u8));
        Assert.Equal(3UL, parts.Subjects.LastSequence("foo.*"u8));
        Assert.Equal(2UL, parts.Subjects.LastSequence("foo.b"u8));
        Assert.Equal(0UL, parts.Subjects.LastSequence("nothing"u8));
        Assert.Equal(4UL, parts.Subjects.LastSequence(">"u8));
    }
}
