using System.Buffers;

namespace Broker.Core.Internal.Auth;

/// <summary>
/// <c>allow_responses</c>: a connection that received a message with a reply subject may publish to that reply
/// subject, up to <see cref="PermissionsTemplate.MaxResponses"/> times within
/// <see cref="PermissionsTemplate.ResponseExpiryTicks"/>, whatever its publish rules say (nats-server <c>client.go</c>
/// <c>deliverMsg</c> records, <c>responseAllowed</c> consumes, <c>pruneReplyPerms</c> cleans up).
/// </summary>
internal sealed partial class ClientPermissions
{
    /// <summary>Recorded replies after which expired and used-up rights are swept (nats-server <c>replyPermLimit</c>).</summary>
    internal const int ReplyPruneThreshold = 4096;

    // Guards replies, lastReplyPrune and repliesSincePrune. A leaf lock: nothing else is taken while holding it.
    private readonly Lock repliesLock = new();
    private readonly Dictionary<byte[], ReplyRight>? replies;
    private readonly Dictionary<byte[], ReplyRight>.AlternateLookup<ReadOnlySpan<byte>> replyLookup;
    private long lastReplyPrune;
    private int repliesSincePrune;

    /// <summary>Whether this connection tracks reply subjects for <c>allow_responses</c>.</summary>
    public bool TracksResponses => replies is not null;

    /// <summary>Reply subjects currently holding a right (for tests and monitoring).</summary>
    internal int TrackedReplyCount
    {
        get
        {
            if (replies is null)
            {
                return 0;
            }

            lock (repliesLock)
            {
                return replies.Count;
            }
        }
    }

    /// <summary>
    /// Records that a message with this reply subject was delivered to the connection, granting the right to
    /// respond; thread-safe (producers call it before queuing the delivery, so the right exists before the
    /// responder can see the request). Nothing is recorded when the static rules already allow the subject.
    /// A repeated delivery of the same reply subject renews its right (nats-server instead counts it as a use).
    /// </summary>
    public void TrackReply(ReadOnlySpan<byte> reply)
    {
        if (replies is null || reply.IsEmpty || template.IsPublishAllowed(reply))
        {
            return;
        }

        var now = template.Time.GetTimestamp();
        lock (repliesLock)
        {
            replyLookup[reply] = new ReplyRight(now, 0);

            // As nats-server: sweep after many recordings or when a second has passed since the last sweep.
            if (++repliesSincePrune > ReplyPruneThreshold || now - lastReplyPrune > template.Time.TimestampFrequency)
            {
                PruneReplies(now);
            }

            // Our addition: a bound, so requests that are never answered cannot grow the map without limit when
            // rights do not expire, or arrive faster than they expire.
            if (replies.Count > template.MaxTrackedReplies)
            {
                EvictOldestReplies();
            }
        }
    }

    /// <summary>Uses one reply right for <paramref name="subject"/> if there is a live one.</summary>
    private bool TryConsumeReply(ReadOnlySpan<byte> subject)
    {
        lock (repliesLock)
        {
            if (replies!.Count == 0 || !replyLookup.TryGetValue(subject, out var right))
            {
                return false;
            }

            if (IsExpired(right, template.ResponseExpiryTicks == 0 ? 0 : template.Time.GetTimestamp()))
            {
                replyLookup.Remove(subject);
                return false;
            }

            // nats-server keeps a used-up entry until the next sweep or attempt; removing it at once is equivalent.
            var uses = right.Uses + 1;
            if (template.MaxResponses > 0 && uses >= template.MaxResponses)
            {
                replyLookup.Remove(subject);
            }
            else
            {
                replyLookup[subject] = right with { Uses = uses };
            }

            return true;
        }
    }

    private bool IsExpired(ReplyRight right, long now) =>
        template.ResponseExpiryTicks > 0 && now - right.Granted > template.ResponseExpiryTicks;

    // Lock held.
    private void PruneReplies(long now)
    {
        foreach (var (key, right) in replies!)
        {
            if ((template.MaxResponses > 0 && right.Uses >= template.MaxResponses) || IsExpired(right, now))
            {
                replies.Remove(key);
            }
        }

        repliesSincePrune = 0;
        lastReplyPrune = now;
    }

    // Lock held. Drops the oldest rights down to three quarters of the bound, so the sort is paid once per
    // quarter-bound of recordings; those requests are the least likely to still be answered.
    private void EvictOldestReplies()
    {
        var count = replies!.Count;
        var keep = template.MaxTrackedReplies - (template.MaxTrackedReplies / 4);
        var timestamps = ArrayPool<long>.Shared.Rent(count);
        try
        {
            var i = 0;
            foreach (var right in replies.Values)
            {
                timestamps[i++] = right.Granted;
            }

            Array.Sort(timestamps, 0, count);
            var newestEvicted = timestamps[count - keep - 1];
            foreach (var (key, right) in replies)
            {
                if (right.Granted <= newestEvicted)
                {
                    replies.Remove(key);
                }
            }
        }
        finally
        {
            ArrayPool<long>.Shared.Return(timestamps);
        }
    }

    /// <summary>A right to respond: when it was granted (timestamp ticks) and how often it was used.</summary>
    private readonly record struct ReplyRight(long Granted, int Uses);
}
