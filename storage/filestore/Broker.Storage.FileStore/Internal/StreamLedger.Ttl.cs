using Broker.Storage.FileStore.Internal.Format;

namespace Broker.Storage.FileStore.Internal;

/// <summary>
/// The messages' own times to live (nats-server 2.11's <c>Nats-TTL</c>): a <see cref="RecordKind.Ttl"/> record
/// before each such message, the <see cref="MessageTtlIndex"/> built from them (and the checkpoint), and the
/// expiries the maintenance tick makes. A stream without such messages has no index.
/// </summary>
internal sealed partial class StreamLedger
{
    private MessageTtlIndex? ttls;

    /// <summary>The times to live, for the checkpoint; null while no message has one.</summary>
    public MessageTtlIndex? Ttls => ttls;

    /// <summary>Notes a time to live read back (a <see cref="RecordKind.Ttl"/> record, or the checkpoint).</summary>
    public void ReplayTtl(ulong sequence, long expires) => (ttls ??= new MessageTtlIndex()).Add(sequence, expires);

    /// <summary>Removes every message whose time to live has passed; true when some were.</summary>
    public bool ExpireByTtl()
    {
        if (ttls is null || messages == 0)
        {
            return false;
        }

        var now = NowNanoseconds(0);
        var removed = false;
        while (ttls.TryTakeDue(now, out var sequence))
        {
            removed |= Expire(sequence, out _);
        }

        return removed;
    }

    /// <summary>
    /// <c>max_age</c> when some message never expires: every older message but those goes (nats-server 2.11's
    /// <c>expireMsgs</c> steps over a <c>Nats-TTL: never</c>).
    /// </summary>
    private bool ExpireByAgeSparingNever(long cutoff) => ExpireByAgeFrom(first, cutoff);

    /// <summary>
    /// <c>max_age</c> from <paramref name="start"/> on, stepping over what stays: messages that never expire, and those
    /// kept for their subject's delete marker.
    /// </summary>
    private bool ExpireByAgeFrom(ulong start, long cutoff)
    {
        var removed = false;
        for (var sequence = blocks.NextLive(start); sequence != 0; sequence = blocks.NextLive(sequence + 1))
        {
            if (ttls is not null && ttls.IsNever(sequence))
            {
                continue;
            }

            var block = blocks.Find(sequence);
            if (block is null || blocks.TimestampOf(block, sequence) > cutoff)
            {
                break;
            }

            removed |= Expire(sequence, out _);
        }

        return removed;
    }

    /// <summary>
    /// Removes a message by <c>max_age</c> or its time to live, unless <see cref="ExpiringLast"/> keeps it (<paramref
    /// name="kept"/>) as its subject's last, for the delete marker.
    /// </summary>
    private bool Expire(ulong sequence, out bool kept)
    {
        kept = false;
        if (ExpiringLast is { } expiring && blocks.Find(sequence) is { } block && block.IsLive(sequence))
        {
            var found = subjects.Find(blocks.SubjectOf(block, sequence, out _));
            if (found >= 0 && subjects[found].Count == 1 && expiring(sequence))
            {
                kept = true;
                return false;
            }
        }

        return RemoveLive(sequence, RemovalReason.Limit);
    }

    /// <summary>Writes the <see cref="RecordKind.Ttl"/> record of the message about to be appended and notes it.</summary>
    private void AppendTtl(MessageBlock block, ulong sequence, long expires)
    {
        AppendMarker(block, sequence, RecordKind.Ttl, expires);
        ReplayTtl(sequence, expires);
    }
}
