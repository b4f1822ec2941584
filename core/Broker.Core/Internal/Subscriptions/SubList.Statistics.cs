using System.Numerics;
using System.Runtime.InteropServices;

namespace Broker.Core.Internal.Subscriptions;

/// <summary>Counters and views for monitoring (<c>/subsz</c>): nothing here is on the publish path but the hit counter.</summary>
internal sealed partial class SubList
{
    // Every cache hit of every publishing core lands here, so it is striped rather than one contended word.
    private readonly StripedCounter cacheHits = new();
    private long cacheMisses;

    // Only written under the trie lock.
    private long inserts;
    private long removes;

    /// <summary>Successful inserts since creation.</summary>
    public long NumInserts => Interlocked.Read(ref inserts);

    /// <summary>Successful removes since creation.</summary>
    public long NumRemoves => Interlocked.Read(ref removes);

    /// <summary>Calls to <see cref="Match"/> answered from the cache.</summary>
    public long CacheHits => cacheHits.Sum();

    /// <summary>Calls to <see cref="Match"/>, hits and misses.</summary>
    public long NumMatches => CacheHits + Interlocked.Read(ref cacheMisses);

    /// <summary>Share of <see cref="Match"/> calls answered from the cache, 0 before the first match.</summary>
    public double CacheHitRate => HitRate(CacheHits, Interlocked.Read(ref cacheMisses));

    /// <summary>A consistent-enough view of the counters plus the fan-out of the cached results (nats-server <c>Stats</c>).</summary>
    public SubListStatistics GetStatistics()
    {
        var hits = cacheHits.Sum();
        var misses = Interlocked.Read(ref cacheMisses);

        // Enumerating the concurrent cache needs no lock; entries changing meanwhile only blur the averages.
        int cached = 0, maxFanout = 0;
        long totalFanout = 0;
        foreach (var entry in cache)
        {
            var fanout = entry.Value.Plain.Length + entry.Value.Queues.Length;
            cached++;
            totalFanout += fanout;
            maxFanout = Math.Max(maxFanout, fanout);
        }

        return new SubListStatistics(
            Count,
            CacheCount,
            NumInserts,
            NumRemoves,
            hits + misses,
            HitRate(hits, misses),
            maxFanout,
            cached == 0 ? 0 : (double)totalFanout / cached,
            hits,
            totalFanout,
            cached);
    }

    private static double HitRate(long hits, long misses) => hits + misses == 0 ? 0 : (double)hits / (hits + misses);

    /// <summary>Every subscription held, in no particular order.</summary>
    public Subscription[] Snapshot()
    {
        var all = new List<Subscription>();
        lock (sync)
        {
            foreach (var node in NodesLocked())
            {
                node.CopyTo(all);
            }
        }

        return [.. all];
    }

    /// <summary>Nodes in the trie; tests use it to check that removal prunes what insertion grew.</summary>
    internal int NodeCount()
    {
        lock (sync)
        {
            return NodesLocked().Count();
        }
    }

    // An explicit stack, not recursion: subjects can be thousands of tokens deep.
    private IEnumerable<SubListNode> NodesLocked()
    {
        var levels = new Stack<SubListLevel>();
        levels.Push(root);
        while (levels.TryPop(out var level))
        {
            foreach (var node in level.Children)
            {
                yield return node;
                if (node.Next is not null)
                {
                    levels.Push(node.Next);
                }
            }
        }
    }

    /// <summary>
    /// A counter incremented from many cores without sharing a cache line: one padded cell per processor slot,
    /// summed on read. Increments are exact; a read is a sum of cells read one by one.
    /// </summary>
    private sealed class StripedCounter
    {
        private readonly Cell[] cells = new Cell[BitOperations.RoundUpToPowerOf2((uint)Environment.ProcessorCount)];

        public void Increment() => Interlocked.Increment(ref cells[Thread.GetCurrentProcessorId() & (cells.Length - 1)].Value);

        public void Add(long value) => Interlocked.Add(ref cells[Thread.GetCurrentProcessorId() & (cells.Length - 1)].Value, value);

        public long Sum()
        {
            long sum = 0;
            for (var i = 0; i < cells.Length; i++)
            {
                sum += Interlocked.Read(ref cells[i].Value);
            }

            return sum;
        }

        // 128 bytes apart so neither adjacent-line prefetch nor a neighbour's writes touch a cell.
        [StructLayout(LayoutKind.Explicit, Size = 128)]
        private struct Cell
        {
            [FieldOffset(64)]
            public long Value;
        }
    }
}

/// <summary>
/// The subject index figures <c>/subsz</c> reports, named after its JSON fields (<c>num_subscriptions</c>,
/// <c>num_cache</c>, <c>num_inserts</c>, <c>num_removes</c>, <c>num_matches</c>, <c>cache_hit_rate</c>,
/// <c>max_fanout</c>, <c>avg_fanout</c>). Fan-out of a result counts plain subscriptions plus queue groups. The last
/// three are the raw figures the rates come from, so statistics of several indexes (one per account) can be summed
/// as nats-server's <c>SublistStats.add</c> does.
/// </summary>
internal readonly record struct SubListStatistics(
    int NumSubscriptions,
    int NumCache,
    long NumInserts,
    long NumRemoves,
    long NumMatches,
    double CacheHitRate,
    int MaxFanout,
    double AvgFanout,
    long CacheHits,
    long TotalFanout,
    int CachedResults);
