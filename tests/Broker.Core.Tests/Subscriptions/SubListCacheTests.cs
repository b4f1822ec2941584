using Broker.Core.Internal.Subscriptions;
using static Broker.Core.Tests.Subscriptions.ResultAssert;
using static Broker.Core.Tests.Subscriptions.SubscriptionFactory;

namespace Broker.Core.Tests.Subscriptions;

/// <summary>The shared match cache: hits, patching on insert and remove, sweeping, statistics, zero allocation.</summary>
public class SubListCacheTests
{
    private readonly SubList list = new();

    [Fact]
    public void Second_match_of_a_subject_is_a_cache_hit_returning_the_same_result()
    {
        list.Insert(Plain("foo"));

        var first = Match(list, "foo");
        var second = Match(list, "foo");

        Assert.Same(first, second);
        Assert.Equal(1, list.CacheCount);
        Assert.Equal(2, list.NumMatches);
        Assert.Equal(1, list.CacheHits);
    }

    [Fact]
    public void Cache_hit_rate_counts_every_match()
    {
        list.Insert(Plain("foo"));
        for (var i = 0; i < 4; i++)
        {
            Match(list, "foo");
        }

        Assert.Equal(0.75, list.CacheHitRate);
        var statistics = list.GetStatistics();
        Assert.Equal(0.75, statistics.CacheHitRate);
        Assert.Equal(4, statistics.NumMatches);
        Assert.Equal(1, statistics.NumSubscriptions);
        Assert.Equal(1, statistics.NumCache);
        Assert.Equal(1, statistics.MaxFanout);
    }

    [Fact]
    public void Fanout_statistics_count_plain_subscriptions_and_queue_groups()
    {
        list.Insert(Plain("a"));
        list.Insert(Plain(">"));
        list.Insert(Queue("a", "q"));
        list.Insert(Queue("a", "q"));
        Match(list, "a");
        Match(list, "b");

        var statistics = list.GetStatistics();
        Assert.Equal(3, statistics.MaxFanout);
        Assert.Equal(2.0, statistics.AvgFanout);
    }

    [Fact]
    public void Cached_literal_subject_sees_new_subscriptions_at_once()
    {
        var literal = Plain("a.b.c.d");
        var star = Plain("a.b.*.d");
        var full = Plain("a.b.>");
        list.Insert(literal);
        Plain(Match(list, "a.b.c.d"), literal);

        list.Insert(star);
        list.Insert(full);
        Plain(Match(list, "a.b.c.d"), literal, star, full);

        list.Insert(Plain("a.b.c"));
        list.Insert(Plain("a.*.c.d.e"));
        Plain(Match(list, "a.b.c.d"), literal, star, full);
        Assert.Equal(1, list.NumMatches - list.CacheHits);
    }

    [Fact]
    public void Cached_empty_subject_sees_a_new_subscription()
    {
        Assert.Same(SubListResult.Empty, Match(list, "foo.bar"));
        Assert.Same(SubListResult.Empty, Match(list, "foo.baz"));

        var star = Plain("foo.*");
        list.Insert(star);
        Plain(Match(list, "foo.bar"), star);

        var literal = Plain("foo.bar");
        list.Insert(literal);
        Plain(Match(list, "foo.bar"), star, literal);
        Plain(Match(list, "foo.baz"), star);

        var full = Plain("foo.>");
        list.Insert(full);
        Plain(Match(list, "foo.bar"), star, literal, full);

        // Every one of those answers came from the patched cache, never from a walk.
        Assert.Equal(2, list.NumMatches - list.CacheHits);
    }

    [Fact]
    public void Cached_subject_stops_seeing_removed_subscriptions()
    {
        var literal = Plain("a.b.c.d");
        var star = Plain("a.b.*.d");
        var full = Plain("a.b.>");
        list.Insert(literal);
        list.Insert(star);
        list.Insert(full);
        Plain(Match(list, "a.b.c.d"), literal, star, full);
        Plain(Match(list, "a.b.x.d"), star, full);

        list.Remove(literal);
        Plain(Match(list, "a.b.c.d"), star, full);
        list.Remove(full);
        Plain(Match(list, "a.b.c.d"), star);
        Plain(Match(list, "a.b.x.d"), star);
        list.Remove(star);

        // Results left empty are dropped from the cache, as nats-server drops them.
        Assert.Equal(0, list.CacheCount);
        Assert.Same(SubListResult.Empty, Match(list, "a.b.c.d"));
        Assert.Equal(0, list.Count);
    }

    [Fact]
    public void Cached_queue_groups_are_patched_per_member()
    {
        var q1 = Queue("jobs.*", "workers");
        var q2 = Queue("jobs.>", "workers");
        Queues(Match(list, "jobs.new"));
        list.Insert(q1);
        Queues(Match(list, "jobs.new"), ("workers", [q1]));
        list.Insert(q2);
        Queues(Match(list, "jobs.new"), ("workers", [q1, q2]));

        var audit = Queue("jobs.new", "audit");
        list.Insert(audit);
        Queues(Match(list, "jobs.new"), ("workers", [q1, q2]), ("audit", [audit]));

        list.Remove(q1);
        Queues(Match(list, "jobs.new"), ("workers", [q2]), ("audit", [audit]));
        list.Remove(q2);
        Queues(Match(list, "jobs.new"), ("audit", [audit]));
        Assert.Equal(1, list.NumMatches - list.CacheHits);
    }

    [Fact]
    public void Patching_never_changes_a_result_a_reader_already_holds()
    {
        var first = Plain("foo");
        list.Insert(first);
        var held = Match(list, "foo");

        list.Insert(Plain("foo"));
        list.Insert(Queue("foo", "q"));
        list.Remove(first);

        Plain(held, first);
        NoQueues(held);
        Assert.NotSame(held, Match(list, "foo"));
    }

    [Fact]
    public void Published_wildcard_subjects_are_patched_like_the_trie_matches_them()
    {
        // Cache first, then subscribe: the patch must agree with a fresh walk of the trie.
        Match(list, "foo.*");
        Match(list, "foo.>");
        Match(list, "foo.bar");
        var star = Plain("foo.*");
        var full = Plain("foo.>");
        var literal = Plain("foo.bar");
        list.Insert(star);
        list.Insert(full);
        list.Insert(literal);

        Plain(Match(list, "foo.*"), star, full);
        Plain(Match(list, "foo.>"), star, full);
        Plain(Match(list, "foo.bar"), star, full, literal);

        var fresh = new SubList();
        fresh.Insert(star);
        fresh.Insert(full);
        fresh.Insert(literal);
        Plain(Match(fresh, "foo.*"), star, full);
        Plain(Match(fresh, "foo.>"), star, full);
    }

    [Fact]
    public void Cache_is_swept_back_under_its_limit_and_stays_correct()
    {
        var full = Plain("many.>");
        list.Insert(full);
        for (var i = 0; i < 2 * SubList.CacheMax; i++)
        {
            Plain(Match(list, $"many.{i}"), full);
        }

        Assert.True(
            SpinWait.SpinUntil(() => list.CacheCount <= SubList.CacheMax, TimeSpan.FromSeconds(5)),
            $"cache still holds {list.CacheCount} entries");
        for (var i = 0; i < 2 * SubList.CacheMax; i += 97)
        {
            Plain(Match(list, $"many.{i}"), full);
        }

        var late = Plain("many.*");
        list.Insert(late);
        Plain(Match(list, "many.5"), full, late);
    }

    [Fact]
    public void Cache_hit_allocates_nothing()
    {
        list.Insert(Plain("orders.new"));
        list.Insert(Plain("orders.*"));
        list.Insert(Plain(">"));
        list.Insert(Queue("orders.>", "workers"));
        var subjects = new[] { "orders.new", "orders.old", "audit.log", "orders.new.eu" }.Select(Bytes).ToArray();
        var nobody = new SubList();
        var noInterest = Bytes("nobody.listens");

        // Warm up: fill the caches and let the JIT settle the paths we measure.
        for (var i = 0; i < 100; i++)
        {
            foreach (var subject in subjects)
            {
                list.Match(subject);
            }

            nobody.Match(noInterest);
        }

        var before = GC.GetAllocatedBytesForCurrentThread();
        var found = 0;
        for (var i = 0; i < 10_000; i++)
        {
            foreach (var subject in subjects)
            {
                found += list.Match(subject).Plain.Length;
            }

            found += nobody.Match(noInterest).Plain.Length;
        }

        var allocated = GC.GetAllocatedBytesForCurrentThread() - before;
        Assert.Equal(0, allocated);
        Assert.Equal(10_000 * (3 + 2 + 1 + 1), found);
    }

    [Fact]
    public void Randomised_changes_keep_cached_results_equal_to_a_brute_force_match()
    {
        // A small token alphabet makes subscriptions and subjects collide often, which is what patching must get right.
        var random = new Random(20240611);
        string[] tokens = ["a", "b", "c", "*", ">"];
        string Pattern(bool literal)
        {
            var count = random.Next(1, 4);
            var parts = new string[count];
            for (var i = 0; i < count; i++)
            {
                var choice = literal ? tokens[random.Next(3)] : tokens[random.Next(i == count - 1 ? 5 : 4)];
                parts[i] = choice;
            }

            return string.Join('.', parts);
        }

        var live = new List<Subscription>();
        for (var step = 0; step < 2000; step++)
        {
            if (live.Count > 0 && random.Next(3) == 0)
            {
                var victim = live[random.Next(live.Count)];
                live.Remove(victim);
                Assert.True(list.Remove(victim));
            }
            else
            {
                var pattern = Pattern(literal: false);
                var sub = random.Next(3) == 0 ? Queue(pattern, random.Next(2) == 0 ? "q1" : "q2") : Plain(pattern);
                Assert.True(list.Insert(sub));
                live.Add(sub);
            }

            // Publishes may carry wildcard tokens too (non-pedantic clients).
            var subject = random.Next(5) == 0 ? Pattern(literal: false) : Pattern(literal: true);
            var expected = live.Where(s => SubjectValidator.MatchesPublished(s.Subject, Bytes(subject))).ToList();
            Exactly(Match(list, subject), expected, $"step {step}, subject {subject}");
        }

        Assert.True(list.CacheHits > 500, $"only {list.CacheHits} hits: the cache path was barely exercised");
        Assert.Equal(live.Count, list.Count);
    }
}
