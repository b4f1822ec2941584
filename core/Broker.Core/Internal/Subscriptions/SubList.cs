using Broker.Abstractions;

namespace Broker.Core.Internal.Subscriptions;

/// <summary>
/// The subject index: a token trie with a literal map and <c>*</c> / <c>&gt;</c> children per level, and a shared
/// match cache patched on change. Thread-safe; <see cref="Match"/> allocates nothing on a cache hit.
/// </summary>
/// <remarks>
/// Locking (see SubList.Cache.cs for the cache side): one lock guards the trie, the scratch state below and every
/// change to the cache. Cache hits take no lock at all; they read a <see cref="System.Collections.Concurrent.ConcurrentDictionary{TKey, TValue}"/>
/// whose values are immutable results. A cache miss walks the trie and stores its result while still holding the
/// lock, so no insert or remove can slip between the walk and the store and leave a stale entry behind (the same
/// reason nats-server takes its write lock on a miss). The lock is never held while calling out of this class.
/// </remarks>
internal sealed partial class SubList
{
    private readonly Lock sync = new();
    private readonly SubListLevel root = new();

    // Scratch state of the trie walks; only used under the lock, so one instance serves every caller.
    private readonly SubListResultBuilder builder = new();
    private readonly Stack<(SubListLevel Level, int Start)> pendingBranches = new();
    private readonly List<PathStep> removePath = [];

    private int count;
    private long generation;

    public SubList()
    {
        cache = new(Environment.ProcessorCount, CacheMax * 2, ByteArrayComparer.Instance);
        cacheLookup = cache.GetAlternateLookup<ReadOnlySpan<byte>>();
    }

    /// <summary>Bumped on every insert and remove; per-connection caches compare it to know they are stale.</summary>
    public long Generation => Interlocked.Read(ref generation);

    /// <summary>Number of subscriptions held.</summary>
    public int Count => Volatile.Read(ref count);

    /// <summary>
    /// Told of every subscription inserted and removed, after the change and outside the lock; set once, before the
    /// first insert (an account bound to a leaf node remote sends its interest over the link). Null otherwise.
    /// </summary>
    public Leaf.LeafInterest? Observer { get; set; }

    /// <summary>
    /// Inserts a subscription. Returns false when its subject is not a valid subject. Inserting the same instance
    /// twice is a no-op that returns true (the index is a set of subscriptions, as in nats-server).
    /// </summary>
    public bool Insert(Subscription subscription)
    {
        ArgumentNullException.ThrowIfNull(subscription);
        var subject = subscription.Subject;
        if (!SubjectValidator.IsValidSubject(subject))
        {
            return false;
        }

        lock (sync)
        {
            var level = root;
            var start = 0;
            SubListNode node;
            while (true)
            {
                var rest = subject.AsSpan(start);
                var dot = rest.IndexOf(SubjectValidator.Separator);
                node = level.GetOrAdd(dot < 0 ? rest : rest[..dot]);
                if (dot < 0)
                {
                    break;
                }

                level = node.Next ??= new SubListLevel();
                start += dot + 1;
            }

            if (!node.Add(subscription))
            {
                return true;
            }

            count++;
            inserts++;
            AddToCache(subscription);
            Interlocked.Increment(ref generation);
        }

        Observer?.Added(subscription);
        return true;
    }

    /// <summary>Removes a subscription. Returns false when it was not present.</summary>
    public bool Remove(Subscription subscription)
    {
        ArgumentNullException.ThrowIfNull(subscription);
        lock (sync)
        {
            if (!RemoveLocked(subscription))
            {
                return false;
            }

            RemoveFromCache(subscription);
            Interlocked.Increment(ref generation);
        }

        Observer?.Removed(subscription);
        return true;
    }

    /// <summary>
    /// Removes many subscriptions at once (a closing client). A small batch patches the cache entry by entry; a large
    /// one clears the cache instead, since patching costs a pass over the cache per wildcard subscription.
    /// </summary>
    public void RemoveBatch(IEnumerable<Subscription> subscriptions)
    {
        ArgumentNullException.ThrowIfNull(subscriptions);
        var batch = subscriptions as IReadOnlyCollection<Subscription> ?? subscriptions.ToArray();
        if (batch.Count == 0)
        {
            return;
        }

        var patchCache = batch.Count <= BatchPatchLimit;
        lock (sync)
        {
            var removed = false;
            foreach (var subscription in batch)
            {
                if (subscription is not null && RemoveLocked(subscription))
                {
                    removed = true;
                    if (patchCache)
                    {
                        RemoveFromCache(subscription);
                    }
                }
            }

            if (!removed)
            {
                return;
            }

            if (!patchCache)
            {
                ClearCache();
            }

            Interlocked.Increment(ref generation);
        }

        if (Observer is { } observer)
        {
            foreach (var subscription in batch)
            {
                observer.Removed(subscription);
            }
        }
    }

    /// <summary>
    /// The subscriptions matching a published subject. A token of the subject that is a lone <c>*</c> or <c>&gt;</c>
    /// is matched like any other token by wildcard subscriptions and matches no literal subscription (nats-server
    /// without pedantic mode). A subject with an empty token matches nothing.
    /// </summary>
    public SubListResult Match(ReadOnlySpan<byte> subject)
    {
        if (cacheLookup.TryGetValue(subject, out var cached))
        {
            cacheHits.Increment();
            return cached;
        }

        return MatchUncached(subject);
    }

    /// <summary>
    /// Counts <paramref name="hits"/> matches a per-connection cache answered without calling <see cref="Match"/>, so
    /// <c>/subsz</c>'s hit rate still covers every publish.
    /// </summary>
    public void CountCacheHits(int hits) => cacheHits.Add(hits);

    /// <summary>Whether a subscription belongs to a queue group (an empty queue name counts as none).</summary>
    internal static bool IsQueue(Subscription subscription) => subscription.Queue is { Length: > 0 };

    private SubListResult MatchUncached(ReadOnlySpan<byte> subject)
    {
        Interlocked.Increment(ref cacheMisses);
        if (subject.IsEmpty || subject[0] == SubjectValidator.Separator || subject[^1] == SubjectValidator.Separator
            || subject.IndexOf(".."u8) >= 0)
        {
            // Not cached: nothing can ever match it, and caching junk would only evict useful entries.
            return SubListResult.Empty;
        }

        SubListResult result;
        bool oversized;
        lock (sync)
        {
            // Another reader may have filled the entry while this one waited for the lock.
            if (cacheLookup.TryGetValue(subject, out var cached))
            {
                return cached;
            }

            pendingBranches.Push((root, 0));
            while (pendingBranches.TryPop(out var branch))
            {
                CollectBranch(branch.Level, subject, branch.Start);
            }

            result = builder.Build();
            oversized = StoreInCache(subject, result);
        }

        if (oversized)
        {
            ScheduleSweep();
        }

        return result;
    }

    /// <summary>
    /// Walks one branch of the trie for the tokens of <paramref name="subject"/> from <paramref name="start"/>.
    /// Branches opened by <c>*</c> children are queued rather than recursed into, so a subject of thousands of tokens
    /// cannot exhaust the stack.
    /// </summary>
    private void CollectBranch(SubListLevel level, ReadOnlySpan<byte> subject, int start)
    {
        while (true)
        {
            var rest = subject[start..];
            var dot = rest.IndexOf(SubjectValidator.Separator);
            var token = dot < 0 ? rest : rest[..dot];

            // '>' here covers this token and everything after it.
            if (level.FullWildcard is { } full)
            {
                builder.Add(full);
            }

            if (dot < 0)
            {
                if (level.FindLiteral(token) is { } literal)
                {
                    builder.Add(literal);
                }

                if (level.SingleWildcard is { } single)
                {
                    builder.Add(single);
                }

                return;
            }

            var next = start + dot + 1;
            if (level.SingleWildcard?.Next is { } singleNext)
            {
                pendingBranches.Push((singleNext, next));
            }

            if (level.FindLiteral(token)?.Next is not { } literalNext)
            {
                return;
            }

            level = literalNext;
            start = next;
        }
    }

    /// <summary>Takes a subscription out of the trie and prunes the nodes it leaves empty. Lock held.</summary>
    private bool RemoveLocked(Subscription subscription)
    {
        // An invalid subject was never inserted, so the walk below simply does not find it.
        var subject = subscription.Subject;
        var level = root;
        var start = 0;
        SubListNode? node;
        removePath.Clear();
        while (true)
        {
            var rest = subject.AsSpan(start);
            var dot = rest.IndexOf(SubjectValidator.Separator);
            var token = dot < 0 ? rest : rest[..dot];
            node = level.Find(token);
            if (node is null)
            {
                return false;
            }

            removePath.Add(new PathStep(level, node, start, token.Length));
            if (dot < 0)
            {
                break;
            }

            if (node.Next is null)
            {
                return false;
            }

            level = node.Next;
            start += dot + 1;
        }

        if (!node.Remove(subscription))
        {
            removePath.Clear();
            return false;
        }

        count--;
        removes++;

        // Bottom up: once a node still holds something, every node above it does too.
        for (var i = removePath.Count - 1; i >= 0; i--)
        {
            var step = removePath[i];
            if (step.Node.Next is { IsEmpty: true })
            {
                step.Node.Next = null;
            }

            if (!step.Node.IsEmpty)
            {
                break;
            }

            step.Level.Remove(subject.AsSpan(step.Start, step.Length));
        }

        removePath.Clear();
        return true;
    }

    /// <summary>One step of a removal walk: the level, the node the token led to, and where the token is.</summary>
    private readonly record struct PathStep(SubListLevel Level, SubListNode Node, int Start, int Length);
}
