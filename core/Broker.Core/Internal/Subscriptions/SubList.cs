namespace Broker.Core.Internal.Subscriptions;

/// <summary>
/// The subject index: a token trie with a literal map and <c>*</c> / <c>&gt;</c> children per level, and a shared
/// match cache patched on change. Thread-safe; <see cref="Match"/> allocates nothing on a cache hit.
/// </summary>
internal sealed partial class SubList
{
    /// <summary>Bumped on every insert and remove; per-connection caches compare it to know they are stale.</summary>
    public long Generation => throw new NotImplementedException();

    /// <summary>Number of subscriptions held.</summary>
    public int Count => throw new NotImplementedException();

    /// <summary>Inserts a subscription. Returns false when its subject is not a valid subject.</summary>
    public bool Insert(Subscription subscription) => throw new NotImplementedException();

    /// <summary>Removes a subscription. Returns false when it was not present.</summary>
    public bool Remove(Subscription subscription) => throw new NotImplementedException();

    /// <summary>Removes many subscriptions at once (a closing client).</summary>
    public void RemoveBatch(IEnumerable<Subscription> subscriptions) => throw new NotImplementedException();

    /// <summary>The subscriptions matching a literal subject.</summary>
    public SubListResult Match(ReadOnlySpan<byte> subject) => throw new NotImplementedException();
}
