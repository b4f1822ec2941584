using System.Text;
using Broker.Abstractions;
using Broker.JetStream.Internal.Json;

namespace Broker.JetStream.Internal.Streams;

/// <summary>
/// The duplicate window (nats-server <c>ddmap</c>): message ids seen within <c>duplicate_window</c> and the sequence
/// each was stored at. A repeated id is answered with the original sequence and <c>"duplicate":true</c> and not stored
/// again. Entries leave the window as new ids arrive; a lookup ignores expired ones. The window's length is the
/// stream's configuration at each call, so an update applies to the next message. Not thread-safe: the publish path
/// calls it under the stream's gate.
/// </summary>
internal sealed class DuplicateWindow
{
    private readonly Dictionary<string, (ulong Sequence, long Timestamp)> ids = new(StringComparer.Ordinal);
    private readonly Queue<(string Id, long Timestamp)> order = new();

    // Whether the window holds what the store kept from before a restart (see EnsureLoaded); a new stream starts with
    // nothing to load.
    private bool loaded;

    /// <param name="loaded">True for a new stream (nothing to refill), false for one re-opened from its store.</param>
    public DuplicateWindow(bool loaded)
    {
        this.loaded = loaded;
    }

    /// <summary>The ids in the window, expired ones not yet dropped included.</summary>
    public int Count => ids.Count;

    /// <summary>The sequence an id was stored at within the window, or null; no allocation for the lookup.</summary>
    public ulong? Find(ReadOnlySpan<byte> id, long window)
    {
        if (ids.Count == 0 || window <= 0)
        {
            return null;
        }

        var chars = id.Length <= 256 ? stackalloc char[id.Length] : new char[id.Length];
        var count = Encoding.UTF8.GetChars(id, chars);
        var lookup = ids.GetAlternateLookup<ReadOnlySpan<char>>();
        if (lookup.TryGetValue(chars[..count], out var entry) && entry.Timestamp + window > GoTime.NowNanoseconds())
        {
            return entry.Sequence;
        }

        return null;
    }

    /// <summary>Remembers the id of a message just stored, dropping the ids that left the window.</summary>
    public void Remember(string id, ulong sequence, long window)
    {
        if (window <= 0)
        {
            return;
        }

        var now = GoTime.NowNanoseconds();
        var cutoff = now - window;
        while (order.TryPeek(out var oldest) && oldest.Timestamp <= cutoff)
        {
            order.Dequeue();
            if (ids.TryGetValue(oldest.Id, out var entry) && entry.Timestamp == oldest.Timestamp)
            {
                ids.Remove(oldest.Id);
            }
        }

        ids[id] = (sequence, now);
        order.Enqueue((id, now));
    }

    /// <summary>
    /// Refills the window from the stored messages after a restart (nats-server <c>rebuildDedupe</c>): every message
    /// stored within the window that carries a <c>Nats-Msg-Id</c>, at its store timestamp; the id of the message at
    /// <paramref name="lastSequence"/> becomes <paramref name="lastMessageId"/>, the one
    /// <c>Nats-Expected-Last-Msg-Id</c> compares with. Lazily, as nats-server does it "to avoid penalizing startup
    /// times": the first message that carries an id or expects a last one, before that message is checked. Reading
    /// back a window of a million messages takes about a second, which a restart of a stream that is only published to
    /// without ids never pays.
    /// </summary>
    public void EnsureLoaded(IStreamStore store, long window, ulong lastSequence, ref string? lastMessageId)
    {
        if (loaded)
        {
            return;
        }

        loaded = true;
        if (window <= 0)
        {
            return;
        }

        var message = new StoredMessage();
        var start = store.GetSequenceFromTime(GoTime.NowNanoseconds() - window);
        while (store.LoadNext(default, start, message, out var found) == LoadStatus.Found)
        {
            string? text = null;
            if (!message.Headers.IsEmpty && NatsHeaderBlock.TryGetValue(message.Headers.Span, NatsHeaders.MsgId, out var id) && !id.IsEmpty)
            {
                text = Encoding.UTF8.GetString(id);
                ids[text] = (found, message.Timestamp);
                order.Enqueue((text, message.Timestamp));
            }

            if (found == lastSequence)
            {
                lastMessageId = text;
            }

            start = found + 1;
        }
    }
}
