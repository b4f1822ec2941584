using System.Diagnostics;
using Broker.Core.Internal.Subscriptions;
using static Broker.Core.Tests.Subscriptions.ResultAssert;
using static Broker.Core.Tests.Subscriptions.SubscriptionFactory;

namespace Broker.Core.Tests.Subscriptions;

/// <summary>Many matchers against concurrent inserts and removes (nats-server TestSublistRaceOn*).</summary>
public class SubListConcurrencyTests
{
    private static readonly TimeSpan RunFor = TimeSpan.FromMilliseconds(700);

    [Fact]
    public void Parallel_inserts_removes_and_matches_leave_the_index_consistent()
    {
        var list = new SubList();
        string[] patterns = ["orders.*", "orders.>", "orders.new", "*.new", ">", "audit.*.eu", "audit.>", "x.y.z"];
        string[] subjects = ["orders.new", "orders.old", "orders.new.eu", "audit.log.eu", "audit.log", "x.y.z", "idle"];

        // Never removed: every match of every subject must keep seeing it, whatever the writers do to the cache.
        var sentinel = Plain(">");
        list.Insert(sentinel);

        const int writers = 3;
        var survivors = new List<Subscription>[writers];
        var failures = new List<string>();
        var matches = 0L;
        var stopwatch = Stopwatch.StartNew();

        void Writer(int index)
        {
            var random = new Random(index);
            var mine = new List<Subscription>();
            while (stopwatch.Elapsed < RunFor)
            {
                if (mine.Count > 20 || (mine.Count > 0 && random.Next(2) == 0))
                {
                    var at = random.Next(mine.Count);
                    if (!list.Remove(mine[at]))
                    {
                        lock (failures)
                        {
                            failures.Add($"remove of {mine[at]} failed");
                        }
                    }

                    mine.RemoveAt(at);
                }
                else if (random.Next(10) == 0)
                {
                    var batch = Enumerable.Range(0, random.Next(1, 12)).Select(_ => Plain(patterns[random.Next(patterns.Length)])).ToList();
                    batch.ForEach(s => list.Insert(s));
                    list.RemoveBatch(batch);
                }
                else
                {
                    var pattern = patterns[random.Next(patterns.Length)];
                    var sub = random.Next(3) == 0 ? Queue(pattern, $"q{random.Next(2)}") : Plain(pattern);
                    list.Insert(sub);
                    mine.Add(sub);
                }
            }

            survivors[index] = mine;
        }

        void Reader(int index)
        {
            var random = new Random(100 + index);
            var encoded = subjects.Select(Bytes).ToArray();
            var count = 0L;
            while (stopwatch.Elapsed < RunFor)
            {
                // Fresh subjects now and then force misses and sweeps alongside the hits.
                var subject = random.Next(8) == 0 ? Bytes($"orders.{random.Next(5000)}") : encoded[random.Next(encoded.Length)];
                var result = list.Match(subject);
                count++;
                if (Array.IndexOf(result.Plain, sentinel) < 0 || result.Queues.Any(g => g.Members.Length == 0))
                {
                    lock (failures)
                    {
                        failures.Add($"inconsistent result for {System.Text.Encoding.UTF8.GetString(subject)}");
                    }

                    return;
                }
            }

            Interlocked.Add(ref matches, count);
        }

        var threads = Enumerable.Range(0, writers).Select(i => new Thread(() => Writer(i)))
            .Concat(Enumerable.Range(0, 3).Select(i => new Thread(() => Reader(i))))
            .ToList();
        threads.ForEach(t => t.Start());
        threads.ForEach(t => Assert.True(t.Join(TimeSpan.FromSeconds(10)), "a worker did not stop"));

        Assert.Empty(failures);
        Assert.True(Interlocked.Read(ref matches) > 1000, $"only {matches} matches ran");

        var expectedLive = survivors.SelectMany(s => s).Append(sentinel).ToList();
        Assert.Equal(expectedLive.Count, list.Count);

        // Whatever the cache holds now must equal a fresh walk, for cached and uncached subjects alike.
        foreach (var subject in subjects)
        {
            var expected = expectedLive.Where(s => SubjectValidator.MatchesPublished(s.Subject, Bytes(subject))).ToList();
            Exactly(Match(list, subject), expected, subject);
        }

        list.RemoveBatch(expectedLive);
        Assert.Equal(0, list.Count);
        Assert.Equal(0, list.NodeCount());
        foreach (var subject in subjects)
        {
            Assert.Same(SubListResult.Empty, Match(list, subject));
        }
    }
}
