using Broker.Core.Internal.Subscriptions;
using static Broker.Core.Tests.Subscriptions.ResultAssert;
using static Broker.Core.Tests.Subscriptions.SubscriptionFactory;

namespace Broker.Core.Tests.Subscriptions;

/// <summary>Insert, remove, batches, counters and pruning of the subject index.</summary>
public class SubListMutationTests
{
    private readonly SubList list = new();

    [Theory]
    [InlineData("")]
    [InlineData(".foo")]
    [InlineData("foo.")]
    [InlineData("foo..bar")]
    [InlineData("foo.bar..baz")]
    [InlineData(">.foo")]
    [InlineData("foo.>.bar")]
    [InlineData("foo bar")]
    [InlineData("foo.\tbar")]
    public void Insert_rejects_invalid_subjects(string subject)
    {
        var generation = list.Generation;

        Assert.False(list.Insert(Plain(subject)));
        Assert.False(list.Insert(Queue(subject, "q")));
        Assert.Equal(0, list.Count);
        Assert.Equal(0, list.NodeCount());
        Assert.Equal(generation, list.Generation);
    }

    [Fact]
    public void Count_and_counters_follow_inserts_and_removes()
    {
        var subs = new[] { Plain("foo"), Plain("bar"), Queue("foo", "q"), Plain("foo.*"), Plain(">") };
        foreach (var sub in subs)
        {
            Assert.True(list.Insert(sub));
        }

        Assert.Equal(5, list.Count);
        Assert.Equal(5, list.NumInserts);
        Assert.True(list.Remove(subs[0]));
        Assert.True(list.Remove(subs[2]));
        Assert.Equal(3, list.Count);
        Assert.Equal(2, list.NumRemoves);

        var snapshot = list.Snapshot();
        Assert.Equal(3, snapshot.Length);
        Assert.Contains(subs[1], snapshot);
        Assert.Contains(subs[3], snapshot);
        Assert.Contains(subs[4], snapshot);
    }

    [Fact]
    public void Inserting_the_same_instance_twice_keeps_one_entry()
    {
        var sub = Plain("foo.*");
        Assert.True(list.Insert(sub));
        Match(list, "foo.bar");
        Assert.True(list.Insert(sub));

        Assert.Equal(1, list.Count);
        Plain(Match(list, "foo.bar"), sub);
        Assert.True(list.Remove(sub));
        Assert.False(list.Remove(sub));
        Assert.Equal(0, list.Count);
    }

    [Fact]
    public void Remove_of_an_absent_subscription_returns_false_and_changes_nothing()
    {
        var present = Plain("foo.bar");
        list.Insert(present);
        var generation = list.Generation;

        Assert.False(list.Remove(Plain("foo.bar")));
        Assert.False(list.Remove(Plain("foo")));
        Assert.False(list.Remove(Plain("foo.bar.baz")));
        Assert.False(list.Remove(Plain("foo..bar")));
        Assert.False(list.Remove(Queue("foo.bar", "q")));

        Assert.Equal(1, list.Count);
        Assert.Equal(generation, list.Generation);
        Plain(Match(list, "foo.bar"), present);
    }

    [Fact]
    public void Removing_a_literal_does_not_remove_a_lookalike_with_wildcard_characters()
    {
        foreach (var subject in new[] { "foo.*-", "foo.>-" })
        {
            var sub = Plain(subject);
            list.Insert(sub);

            Assert.False(list.Remove(Plain("foo.bar")));
            Assert.Equal(1, list.Count);
            Assert.True(list.Remove(sub));
            Assert.Equal(0, list.Count);
        }
    }

    [Fact]
    public void Queue_member_is_removed_from_its_group_only()
    {
        var a = Queue("foo", "q1");
        var b = Queue("foo", "q2");
        list.Insert(a);
        list.Insert(b);

        Assert.False(list.Remove(Queue("foo", "q1")));
        Assert.True(list.Remove(a));
        Queues(Match(list, "foo"), ("q2", [b]));
    }

    [Fact]
    public void Generation_moves_on_every_insert_and_remove_but_not_on_match()
    {
        var sub = Plain("foo");
        var start = list.Generation;
        list.Insert(sub);
        var afterInsert = list.Generation;
        Match(list, "foo");
        Match(list, "foo");
        Assert.Equal(afterInsert, list.Generation);
        list.Remove(sub);

        Assert.True(afterInsert > start);
        Assert.True(list.Generation > afterInsert);
    }

    [Fact]
    public void Removal_prunes_the_trie_back_to_its_baseline()
    {
        var resident = Plain("resident.topic");
        list.Insert(resident);
        var baseline = list.NodeCount();

        // Clients come and go on subjects that share and do not share prefixes with each other and the resident.
        for (var round = 0; round < 50; round++)
        {
            var subs = new[]
            {
                Plain($"client.{round}.inbox.>"),
                Plain($"resident.topic.{round}"),
                Plain("resident.*"),
                Queue($"work.{round}.*", "q"),
                Plain($"a.b.c.d.e.{round}"),
                Plain("resident"),
            };
            foreach (var sub in subs)
            {
                Assert.True(list.Insert(sub));
            }

            Assert.True(list.NodeCount() > baseline);
            foreach (var sub in subs)
            {
                Assert.True(list.Remove(sub));
            }

            Assert.Equal(baseline, list.NodeCount());
        }

        Assert.Equal(1, list.Count);
        Plain(Match(list, "resident.topic"), resident);
        Assert.True(list.Remove(resident));
        Assert.Equal(0, list.NodeCount());
    }

    [Fact]
    public void Removing_a_parent_keeps_the_longer_subjects_below_it()
    {
        var parent = Plain("foo");
        var child = Plain("foo.bar");
        list.Insert(parent);
        list.Insert(child);

        list.Remove(parent);
        Plain(Match(list, "foo.bar"), child);
        Assert.Same(SubListResult.Empty, Match(list, "foo"));
        Assert.Equal(2, list.NodeCount());

        list.Remove(child);
        Assert.Equal(0, list.NodeCount());
    }

    [Theory]
    [InlineData(3)]
    [InlineData(100)]
    public void RemoveBatch_removes_every_subscription_and_keeps_others(int batchSize)
    {
        var keep = Plain("keep.*");
        list.Insert(keep);
        var batch = Enumerable.Range(0, batchSize)
            .Select(i => i % 2 == 0 ? Plain($"keep.{i}") : Queue("keep.>", "q"))
            .ToList();
        foreach (var sub in batch)
        {
            list.Insert(sub);
        }

        Queues(Match(list, "keep.1"), ("q", [.. batch.Where(s => s.Queue is not null)]));
        var generation = list.Generation;

        list.RemoveBatch(batch.Append(Plain("never.inserted")));

        Assert.Equal(1, list.Count);
        Assert.Equal(batchSize, list.NumRemoves);
        Assert.True(list.Generation > generation);
        Plain(Match(list, "keep.0"), keep);
        NoQueues(Match(list, "keep.1"));
        Assert.Equal(2, list.NodeCount());
    }

    [Fact]
    public void Large_remove_batch_clears_the_cache_and_later_matches_refill_it()
    {
        var subs = Enumerable.Range(0, 20).Select(i => Plain($"s.{i}")).ToList();
        var other = Plain("other");
        list.Insert(other);
        subs.ForEach(s => list.Insert(s));
        for (var i = 0; i < 20; i++)
        {
            Match(list, $"s.{i}");
        }

        Match(list, "other");
        Assert.Equal(21, list.CacheCount);

        list.RemoveBatch(subs);

        Assert.Equal(0, list.CacheCount);
        Plain(Match(list, "other"), other);
        Assert.Same(SubListResult.Empty, Match(list, "s.3"));
        Assert.Equal(2, list.CacheCount);
    }

    [Fact]
    public void RemoveBatch_of_nothing_present_leaves_generation_alone()
    {
        list.Insert(Plain("foo"));
        var generation = list.Generation;

        list.RemoveBatch([]);
        list.RemoveBatch([Plain("foo"), Plain("bar")]);

        Assert.Equal(generation, list.Generation);
        Assert.Equal(1, list.Count);
    }
}
