using Broker.Core.Internal.Subscriptions;

namespace Broker.Core.Internal.Clients;

/// <summary>
/// A one-entry match cache per producer: the last subject it published to and the result, valid while the subject
/// index's generation is unchanged. Most producers publish to the same subject again and again; for them a publish
/// costs one comparison with the last subject instead of hashing it and probing the shared cache, whose buckets
/// every publishing core reads (nats-server keeps a per-client result cache for the same reason).
/// </summary>
/// <remarks>
/// A mutable struct held in a field of <see cref="ClientBase"/> (called on the field, never copied), so a connection
/// pays no object of its own for it; only the producer's own thread (one batch at a time) touches it.
/// </remarks>
internal struct PublishMatchCache
{
    // Longest subject remembered; longer ones always go to the shared cache.
    private const int SubjectLimit = 256;

    private byte[]? lastSubject;
    private int lastSubjectLength;
    private long lastGeneration;
    private SubListResult? lastResult;

    // The index the remembered result came from, and the hits it answered since they were last added to that index's
    // /subsz count: added once per producer batch (PublishHits) rather than by an interlocked add per publish.
    private SubList? lastList;
    private int pendingHits;

    /// <summary>Drops the remembered result: it belongs to the subject index of the account the client leaves.</summary>
    public void Forget()
    {
        PublishHits();
        lastResult = null;
        lastList = null;
    }

    /// <summary>Adds the hits answered since the last call to the index's <c>/subsz</c> figures; called at the end of each producer batch.</summary>
    public void PublishHits()
    {
        if (pendingHits != 0)
        {
            lastList!.CountCacheHits(pendingHits);
            pendingHits = 0;
        }
    }

    /// <summary>The subscriptions of <paramref name="list"/> matching <paramref name="subject"/>, from the cache when it is current.</summary>
    public SubListResult Match(SubList list, ReadOnlySpan<byte> subject)
    {
        // Read before matching: any insert or remove after this bumps the generation, so a result that misses a
        // change is never remembered as current.
        var generation = list.Generation;
        if (lastResult is { } cached && generation == lastGeneration && ReferenceEquals(list, lastList) && subject.SequenceEqual(lastSubject.AsSpan(0, lastSubjectLength)))
        {
            pendingHits++;
            return cached;
        }

        var result = list.Match(subject);
        if (subject.Length <= SubjectLimit)
        {
            lastSubject ??= new byte[SubjectLimit];
            subject.CopyTo(lastSubject);
            lastSubjectLength = subject.Length;
            lastGeneration = generation;
            lastResult = result;
            if (!ReferenceEquals(list, lastList))
            {
                PublishHits();
                lastList = list;
            }
        }

        return result;
    }
}
