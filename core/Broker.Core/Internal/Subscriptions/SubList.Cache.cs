using System.Collections.Concurrent;

namespace Broker.Core.Internal.Subscriptions;

/// <summary>
/// The shared match cache: published subject → result. Hits are lock-free and allocation-free (probed with the
/// subject span through an alternate lookup). Every change (store on a miss, patch, sweep, clear) happens under the
/// trie lock, so the cache always agrees with the trie once the lock is released.
/// </summary>
internal sealed partial class SubList
{
    /// <summary>Entries above which a sweep is scheduled (nats-server <c>slCacheMax</c>).</summary>
    public const int CacheMax = 1024;

    /// <summary>Entries a sweep leaves behind (nats-server <c>slCacheSweep</c>).</summary>
    public const int CacheSweepTarget = 256;

    // Largest RemoveBatch that patches the cache; beyond it clearing and refilling on demand is cheaper.
    private const int BatchPatchLimit = 8;

    private readonly ConcurrentDictionary<byte[], SubListResult> cache;
    private readonly ConcurrentDictionary<byte[], SubListResult>.AlternateLookup<ReadOnlySpan<byte>> cacheLookup;

    // Kept by hand because ConcurrentDictionary.Count takes every bucket lock; only changed under the trie lock.
    private int cacheCount;
    private int sweepScheduled;

    /// <summary>Number of subjects in the match cache.</summary>
    public int CacheCount => Volatile.Read(ref cacheCount);

    /// <summary>Stores a miss's result. Returns whether the cache has outgrown <see cref="CacheMax"/>. Lock held.</summary>
    private bool StoreInCache(ReadOnlySpan<byte> subject, SubListResult result)
    {
        if (cacheLookup.TryAdd(subject, result))
        {
            cacheCount++;
        }

        return cacheCount > CacheMax;
    }

    /// <summary>Adds a new subscription to every cached result whose subject it matches. Lock held.</summary>
    private void AddToCache(Subscription subscription)
    {
        var pattern = subscription.Subject;
        if (!SubjectValidator.HasWildcard(pattern))
        {
            // A literal subscription matches exactly one published subject: itself.
            if (cache.TryGetValue(pattern, out var result))
            {
                cache[pattern] = SubListResultBuilder.WithAdded(result, subscription);
            }

            return;
        }

        foreach (var (subject, result) in cache)
        {
            if (SubjectValidator.MatchesPublished(pattern, subject))
            {
                cache[subject] = SubListResultBuilder.WithAdded(result, subscription);
            }
        }
    }

    /// <summary>
    /// Takes a removed subscription out of every cached result holding it. A result left empty is dropped rather
    /// than kept, so subjects nobody listens to any more do not crowd the cache. Lock held.
    /// </summary>
    private void RemoveFromCache(Subscription subscription)
    {
        var pattern = subscription.Subject;
        if (!SubjectValidator.HasWildcard(pattern))
        {
            if (cache.TryGetValue(pattern, out var result))
            {
                PatchRemoved(pattern, result, subscription);
            }

            return;
        }

        foreach (var (subject, result) in cache)
        {
            if (SubjectValidator.MatchesPublished(pattern, subject))
            {
                PatchRemoved(subject, result, subscription);
            }
        }
    }

    private void PatchRemoved(byte[] subject, SubListResult result, Subscription subscription)
    {
        var patched = SubListResultBuilder.WithRemoved(result, subscription);
        if (ReferenceEquals(patched, result))
        {
            return;
        }

        if (!patched.IsEmpty)
        {
            cache[subject] = patched;
        }
        else if (cache.TryRemove(subject, out _))
        {
            cacheCount--;
        }
    }

    /// <summary>Drops every entry. Lock held.</summary>
    private void ClearCache()
    {
        cache.Clear();
        cacheCount = 0;
    }

    /// <summary>
    /// Queues one sweep on the thread pool, so the publisher whose miss overfilled the cache does not pay for it
    /// (nats-server runs <c>reduceCacheCount</c> on its own goroutine).
    /// </summary>
    private void ScheduleSweep()
    {
        if (Interlocked.CompareExchange(ref sweepScheduled, 1, 0) == 0)
        {
            ThreadPool.UnsafeQueueUserWorkItem(static list => list.SweepCache(), this, preferLocal: false);
        }
    }

    /// <summary>
    /// Evicts entries until <see cref="CacheSweepTarget"/> remain. Which ones go is arbitrary, as in nats-server:
    /// tracking recency would cost a write per hit on a line every publishing core shares.
    /// </summary>
    private void SweepCache()
    {
        lock (sync)
        {
            foreach (var entry in cache)
            {
                if (cacheCount <= CacheSweepTarget)
                {
                    break;
                }

                if (cache.TryRemove(entry.Key, out _))
                {
                    cacheCount--;
                }
            }
        }

        Volatile.Write(ref sweepScheduled, 0);

        // Misses that overfilled the cache again before the flag was reset found a sweep pending and queued none.
        if (CacheCount > CacheMax)
        {
            ScheduleSweep();
        }
    }
}
