using System.Text;
using Broker.JetStream.Internal.Json;

namespace Broker.JetStream.Internal.Streams;

/// <summary>
/// The duplicate window (nats-server <c>ddmap</c>): message ids seen within <c>duplicate_window</c> and the sequence
/// each was stored at. A repeated id is answered with the original sequence and <c>"duplicate":true</c> and not stored
/// again. Entries leave the window as new ids arrive; a lookup ignores expired ones. Guarded by <c>gate</c>.
/// </summary>
internal sealed partial class MessageStream
{
    private readonly Dictionary<string, (ulong Sequence, long Timestamp)> messageIds = new(StringComparer.Ordinal);
    private readonly Queue<(string Id, long Timestamp)> messageIdOrder = new();

    // Whether the window holds what the store kept from before a restart (see EnsureMessageIdsLoaded); a new stream
    // starts with nothing to load.
    private bool messageIdsLoaded;

    /// <summary>The sequence an id was stored at within the window, or null; no allocation for the lookup.</summary>
    private ulong? FindDuplicate(ReadOnlySpan<byte> id)
    {
        if (messageIds.Count == 0 || config.DuplicateWindow <= 0)
        {
            return null;
        }

        var chars = id.Length <= 256 ? stackalloc char[id.Length] : new char[id.Length];
        var count = Encoding.UTF8.GetChars(id, chars);
        var lookup = messageIds.GetAlternateLookup<ReadOnlySpan<char>>();
        if (lookup.TryGetValue(chars[..count], out var entry) && entry.Timestamp + config.DuplicateWindow > GoTime.NowNanoseconds())
        {
            return entry.Sequence;
        }

        return null;
    }

    private void RememberMessageId(string id, ulong sequence)
    {
        if (config.DuplicateWindow <= 0)
        {
            return;
        }

        var now = GoTime.NowNanoseconds();
        var cutoff = now - config.DuplicateWindow;
        while (messageIdOrder.TryPeek(out var oldest) && oldest.Timestamp <= cutoff)
        {
            messageIdOrder.Dequeue();
            if (messageIds.TryGetValue(oldest.Id, out var entry) && entry.Timestamp == oldest.Timestamp)
            {
                messageIds.Remove(oldest.Id);
            }
        }

        messageIds[id] = (sequence, now);
        messageIdOrder.Enqueue((id, now));
    }

    /// <summary>
    /// Refills the window from the stored messages after a restart (nats-server <c>rebuildDedupe</c>): every message
    /// stored within <c>duplicate_window</c> that carries a <c>Nats-Msg-Id</c>, at its store timestamp, and the id of
    /// the last message as the one <c>Nats-Expected-Last-Msg-Id</c> compares with. Lazily, as nats-server does it "to
    /// avoid penalizing startup times": the first message that carries an id or expects a last one, under
    /// <c>gate</c>, before that message is checked. Reading back a window of a million messages takes about a second,
    /// which a restart of a stream that is only published to without ids never pays.
    /// </summary>
    private void EnsureMessageIdsLoaded()
    {
        if (messageIdsLoaded)
        {
            return;
        }

        messageIdsLoaded = true;
        if (config.DuplicateWindow <= 0)
        {
            return;
        }

        var message = new Broker.Abstractions.StoredMessage();
        var start = Store.GetSequenceFromTime(GoTime.NowNanoseconds() - config.DuplicateWindow);
        while (Store.LoadNext(default, start, message, out var found) == Broker.Abstractions.LoadStatus.Found)
        {
            string? text = null;
            if (!message.Headers.IsEmpty && NatsHeaders.TryGet(message.Headers.Span, NatsHeaders.MsgId, out var id) && !id.IsEmpty)
            {
                text = Encoding.UTF8.GetString(id);
                messageIds[text] = (found, message.Timestamp);
                messageIdOrder.Enqueue((text, message.Timestamp));
            }

            if (found == lastSequence)
            {
                lastMessageId = text;
            }

            start = found + 1;
        }
    }
}
