using Broker.Abstractions;

namespace Broker.Storage.FileStore.Internal;

/// <summary>The stream's limits: max_msgs, max_bytes, max_age, max_msgs_per_subject, discard new.</summary>
internal sealed partial class StreamLedger
{
    /// <summary>Under <see cref="DiscardPolicy.New"/>, whether a message may be stored; the limit status when not.</summary>
    public StoreStatus CheckDiscardNew(StreamStoreConfig config, ReadOnlySpan<byte> subject, ulong accounted)
    {
        if (config.MaxBytes > 0 && accounted > (ulong)config.MaxBytes)
        {
            return config.Discard == DiscardPolicy.New ? StoreStatus.MaxBytes : StoreStatus.MessageTooLarge;
        }

        if (config.Discard != DiscardPolicy.New)
        {
            return StoreStatus.Stored;
        }

        // At its own per-subject limit the append replaces that subject's oldest, so the stream does not grow
        // (nats-server: discard new refuses only what would grow the stream past max_msgs or max_bytes).
        var replacesOwn = false;
        var replacedSize = 0UL;
        if (config.MaxMessagesPerSubject > 0)
        {
            var index = subjects.Find(subject);
            if (index >= 0 && subjects[index].Count >= (ulong)config.MaxMessagesPerSubject)
            {
                if (config.DiscardNewPerSubject)
                {
                    return StoreStatus.MaxMessagesPerSubject;
                }

                replacesOwn = true;
                var oldest = subjects.ResolveFirst(index);
                var block = oldest == 0 ? null : blocks.Find(oldest);
                if (block is not null)
                {
                    blocks.SubjectOf(block, oldest, out replacedSize);
                }
            }
        }

        if (config.MaxMessages > 0 && messages >= (ulong)config.MaxMessages && !replacesOwn)
        {
            return StoreStatus.MaxMessages;
        }

        if (config.MaxBytes > 0 && bytes + accounted > (ulong)config.MaxBytes && (!replacesOwn || replacedSize < accounted))
        {
            return StoreStatus.MaxBytes;
        }

        return StoreStatus.Stored;
    }

    /// <summary>After an append: the subject's oldest beyond its limit go, then the stream's oldest beyond its limits.</summary>
    public void EnforceLimitsAfterAppend(StreamStoreConfig config, ReadOnlySpan<byte> subject)
    {
        if (config.MaxMessagesPerSubject > 0)
        {
            var index = subjects.Find(subject);
            while (index >= 0 && subjects[index].Count > (ulong)config.MaxMessagesPerSubject)
            {
                var oldest = subjects.ResolveFirst(index);
                if (oldest == 0 || !RemoveLive(oldest, RemovalReason.Limit))
                {
                    break;
                }

                index = subjects.Find(subject);
            }
        }

        EnforceStreamLimits(config);
    }

    /// <summary>Lower per-subject limits apply at once, as nats-server's enforcePerSubjectLimit on update.</summary>
    public void EnforceSubjectLimits(StreamStoreConfig config)
    {
        if (config.MaxMessagesPerSubject <= 0)
        {
            return;
        }

        foreach (var index in subjects.Indexes().ToList())
        {
            while (subjects.Find(subjects[index].Subject) == index && subjects[index].Count > (ulong)config.MaxMessagesPerSubject)
            {
                var oldest = subjects.ResolveFirst(index);
                if (oldest == 0 || !RemoveLive(oldest, RemovalReason.Limit))
                {
                    break;
                }
            }
        }
    }

    /// <summary>Removes the oldest messages while the stream is over <c>max_msgs</c> or <c>max_bytes</c> (discard old).</summary>
    public void EnforceStreamLimits(StreamStoreConfig config)
    {
        if (config.Discard == DiscardPolicy.New)
        {
            return;
        }

        while (messages > 0
               && ((config.MaxMessages > 0 && messages > (ulong)config.MaxMessages)
                   || (config.MaxBytes > 0 && bytes > (ulong)config.MaxBytes)))
        {
            if (!RemoveLive(first, RemovalReason.Limit))
            {
                break;
            }
        }
    }

    /// <summary>Removes messages older than <c>max_age</c> from the head; true when some were.</summary>
    public bool ExpireByAge(StreamStoreConfig config)
    {
        if (config.MaxAge <= TimeSpan.Zero || messages == 0)
        {
            return false;
        }

        var cutoff = NowNanoseconds(0) - (config.MaxAge.Ticks * 100);
        if (ttls is { HasNever: true })
        {
            return ExpireByAgeSparingNever(cutoff);
        }

        var removed = false;
        while (messages > 0 && firstTimestamp <= cutoff && firstTimestamp != 0)
        {
            if (!Expire(first, out var kept))
            {
                // Kept for its subject's delete marker: the older messages behind it expire all the same.
                return (kept && ExpireByAgeFrom(first + 1, cutoff)) || removed;
            }

            removed = true;
        }

        return removed;
    }
}
