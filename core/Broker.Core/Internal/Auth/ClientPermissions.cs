using Broker.Abstractions;

namespace Broker.Core.Internal.Auth;

/// <summary>
/// The publish and subscribe permissions of one connection, with a per-connection cache of publish decisions
/// and the reply subjects it may answer (<c>allow_responses</c>, in ClientPermissions.Responses.cs).
/// Threading: <see cref="CanPublish"/>, <see cref="CanSubscribe(ReadOnlySpan{byte}, ReadOnlySpan{byte})"/> and
/// <see cref="NeedsDeliveryCheck(ReadOnlySpan{byte}, ReadOnlySpan{byte})"/> belong to the connection's read loop;
/// <see cref="IsDeliveryAllowed(ReadOnlySpan{byte}, ReadOnlySpan{byte})"/> and <see cref="TrackReply"/> may be called
/// by any producer thread.
/// </summary>
internal sealed partial class ClientPermissions
{
    /// <summary>Publish decisions cached per connection (nats-server <c>maxPermCacheSize</c>).</summary>
    internal const int MaxPublishCacheSize = 128;

    /// <summary>Entries dropped when the cache is full (nats-server <c>pruneSize</c>).</summary>
    internal const int PublishCachePruneSize = 32;

    private readonly PermissionsTemplate template;

    // Read loop only, so no lock. Keys are subjects; a hit is probed with the span and allocates nothing.
    private readonly Dictionary<byte[], bool>? publishCache;
    private readonly Dictionary<byte[], bool>.AlternateLookup<ReadOnlySpan<byte>> publishCacheLookup;

    internal ClientPermissions(PermissionsTemplate template)
    {
        this.template = template;
        if (template.RestrictsPublish)
        {
            publishCache = new Dictionary<byte[], bool>(MaxPublishCacheSize + 1, ByteArrayComparer.Instance);
            publishCacheLookup = publishCache.GetAlternateLookup<ReadOnlySpan<byte>>();
        }

        if (template.TracksResponses)
        {
            replies = new Dictionary<byte[], ReplyRight>(ByteArrayComparer.Instance);
            replyLookup = replies.GetAlternateLookup<ReadOnlySpan<byte>>();
            lastReplyPrune = template.Time.GetTimestamp();
        }
    }

    /// <summary>The shared compiled permissions this connection was made from.</summary>
    public PermissionsTemplate Template => template;

    /// <summary>Number of cached publish decisions (for tests and monitoring).</summary>
    internal int PublishCacheCount => publishCache?.Count ?? 0;

    /// <summary>
    /// Whether the connection may publish to a literal subject: the static allow/deny rules (cached), else a
    /// reply right from <c>allow_responses</c>, which it consumes. Allocation-free on a cache hit.
    /// </summary>
    public bool CanPublish(ReadOnlySpan<byte> subject)
    {
        if (publishCache is null)
        {
            return true;
        }

        if (publishCacheLookup.TryGetValue(subject, out var allowed))
        {
            return allowed || (replies is not null && TryConsumeReply(subject));
        }

        allowed = template.IsPublishAllowed(subject);
        if (!allowed && replies is not null)
        {
            // As nats-server pubAllowedFullCheck: with reply rights in play a denial is not cached, so reply
            // subjects (unique per request) do not churn the cache; granted responses never enter it either.
            return TryConsumeReply(subject);
        }

        if (publishCache.Count >= MaxPublishCacheSize)
        {
            PrunePublishCache();
        }

        publishCacheLookup[subject] = allowed;
        return allowed;
    }

    /// <summary>
    /// Whether the connection may subscribe to a subject (possibly with wildcards) in a queue group (empty for none).
    /// </summary>
    public bool CanSubscribe(ReadOnlySpan<byte> subject, ReadOnlySpan<byte> queue) => template.IsSubscribeAllowed(subject, queue);

    /// <summary>
    /// Whether a new subscription in a queue group (empty for none) overlaps a subscribe-deny entry that applies to
    /// it, so deliveries need <see cref="IsDeliveryAllowed(ReadOnlySpan{byte}, ReadOnlySpan{byte})"/> with the same queue.
    /// </summary>
    public bool NeedsDeliveryCheck(ReadOnlySpan<byte> subject, ReadOnlySpan<byte> queue) => template.NeedsDeliveryCheck(subject, queue);

    /// <summary>
    /// Whether a message on a literal subject may be delivered to a subscription in a queue group (empty for none),
    /// as nats-server <c>checkDenySub</c>; thread-safe (the deny list is immutable, so no cache or lock is needed).
    /// </summary>
    public bool IsDeliveryAllowed(ReadOnlySpan<byte> subject, ReadOnlySpan<byte> queue) => template.IsDeliveryAllowed(subject, queue);

    // nats-server drops pruneSize arbitrary entries; the first ones enumerated are as good a choice, and a
    // Dictionary allows Remove while enumerating.
    private void PrunePublishCache()
    {
        var removed = 0;
        foreach (var key in publishCache!.Keys)
        {
            publishCache.Remove(key);
            if (++removed >= PublishCachePruneSize)
            {
                break;
            }
        }
    }
}
