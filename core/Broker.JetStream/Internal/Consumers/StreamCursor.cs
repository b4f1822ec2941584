using System.Text;
using Broker.Abstractions;
using Broker.JetStream.Internal.Json;
using Broker.JetStream.Internal.Models;

namespace Broker.JetStream.Internal.Consumers;

/// <summary>
/// Where a consumer is in its stream (nats-server <c>sseq</c>, <c>dseq</c>, <c>filters</c>, the last-per-subject skip
/// list and the cached pending count <c>npc</c>/<c>npf</c>): the next stream sequence to look at, the next consumer
/// sequence to give a delivery, which subjects it takes, and how many matching messages lie ahead. Loads the next
/// message to deliver into the caller's message. Guarded by the consumer's lock, except the filters, which the
/// publish path reads without it (copy-on-write).
/// </summary>
internal sealed class StreamCursor(IStreamStore store)
{
    // One filter as its array, none or several as an array of them (copy-on-write): the one-element array of a single
    // filter was 32 B of each MQTT QoS 1 consumer (issue 25). Read through FiltersOf.
    private object filters = Array.Empty<byte[]>();

    // Position (nats-server sseq, dseq): the next stream and consumer sequences.
    private ulong streamSequence = 1;
    private ulong deliverySequence = 1;

    // Cached count of matching messages not yet delivered, valid through a stream sequence (nats-server npc, npcm).
    private ulong pendingCount;
    private ulong pendingCountThrough;
    private bool pendingCountValid;

    // Last-per-subject start: the last sequence of each subject, then resume at the stream's end.
    private ulong[]? skipList;
    private int skipIndex;
    private ulong skipResume;

    /// <summary>The next stream sequence to look at.</summary>
    public ulong StreamSequence => streamSequence;

    /// <summary>The consumer sequence the next delivery gets.</summary>
    public ulong DeliverySequence => deliverySequence;

    /// <summary>The last consumer and stream sequences delivered (nats-server <c>delivered</c>).</summary>
    public SequencePair Delivered => new(deliverySequence - 1, streamSequence - 1);

    /// <summary>When the last delivery went (ns since the Unix epoch), 0 for never.</summary>
    public long LastDelivered { get; set; }

    /// <summary>The last delivery's sequences and time as consumer info reports them (<c>delivered</c>).</summary>
    public SequenceInfo DeliveredInfo => new() { Consumer = deliverySequence - 1, Stream = streamSequence - 1, LastActive = LastDelivered == 0 ? null : LastDelivered };

    /// <summary>Takes the filters of a configuration (none, one or several; <c>&gt;</c> means all).</summary>
    public void SetFilters(ConsumerConfig config)
    {
        List<byte[]> list = [];
        if (config.FilterSubjectUtf8 is { Length: > 0 } single && !single.AsSpan().SequenceEqual(">"u8))
        {
            // The configuration's own bytes (never changed), not a copy.
            list.Add(single);
        }

        foreach (var filter in config.FilterSubjects ?? [])
        {
            if (filter == ">")
            {
                list.Clear();
                break;
            }

            list.Add(Encoding.UTF8.GetBytes(filter));
        }

        Volatile.Write(ref filters, list.Count == 1 ? list[0] : list.ToArray());
    }

    /// <summary>Whether a stored message on <paramref name="subject"/> is one this consumer delivers. Any thread.</summary>
    public bool Matches(ReadOnlySpan<byte> subject)
    {
        byte[]? one = null;
        var current = FiltersOf(Volatile.Read(ref filters), ref one);
        if (current.Length == 0)
        {
            return true;
        }

        foreach (var filter in current)
        {
            if (Subjects.MatchesLiteral(filter, subject))
            {
                return true;
            }
        }

        return false;
    }

    /// <summary>Whether a purge filter overlaps the filters (nats-server <c>isFilteredMatch</c> on the filter). Any thread.</summary>
    public bool MatchesFilter(ReadOnlySpan<byte> purgeFilter)
    {
        byte[]? one = null;
        var current = FiltersOf(Volatile.Read(ref filters), ref one);
        if (current.Length == 0)
        {
            return true;
        }

        foreach (var filter in current)
        {
            if (Subjects.Collide(filter, purgeFilter))
            {
                return true;
            }
        }

        return false;
    }

    /// <summary>
    /// nats-server <c>selectStartingSeqNo</c>: where a new consumer starts, from its deliver policy. Returns the last
    /// stream sequence before the start (the ack floor it starts with).
    /// </summary>
    public ulong SelectStart(ConsumerConfig config)
    {
        var state = store.GetState();
        ulong start;
        if (config.OptStartSeq != 0)
        {
            start = config.OptStartSeq;
        }
        else
        {
            switch (config.DeliverPolicy)
            {
                case DeliverPolicy.All:
                    start = state.FirstSequence;
                    break;
                case DeliverPolicy.Last:
                    start = state.LastSequence;
                    if (!IsUnfiltered)
                    {
                        start = LastMatching();
                    }

                    break;
                case DeliverPolicy.LastPerSubject:
                    var lasts = new List<ulong>();
                    byte[]? one = null;
                    foreach (var filter in IsUnfiltered ? [">"u8.ToArray()] : FiltersOf(filters, ref one))
                    {
                        lasts.AddRange(store.GetSubjectsState(Encoding.UTF8.GetString(filter)).Values.Select(s => s.Last));
                    }

                    if (lasts.Count > 0)
                    {
                        lasts.Sort();
                        skipList = [.. lasts.Distinct()];
                        skipIndex = 0;
                        skipResume = state.LastSequence;
                        start = skipList[0];
                    }
                    else
                    {
                        start = state.LastSequence;
                    }

                    break;
                case DeliverPolicy.ByStartTime when config.OptStartTime is { } time:
                    start = store.GetSequenceFromTime(time);
                    break;
                default:
                    start = state.LastSequence + 1;
                    break;
            }
        }

        if (state.FirstSequence == 0)
        {
            start = 1;
        }
        else if (start < state.FirstSequence)
        {
            start = state.FirstSequence;
        }
        else if (start > state.LastSequence)
        {
            start = state.LastSequence + 1;
        }

        streamSequence = Math.Max(start, 1);
        deliverySequence = 1;
        pendingCountValid = false;
        return streamSequence - 1;
    }

    /// <summary>Resumes from a stored state (nats-server <c>applyState</c>): the positions after what was delivered.</summary>
    public void Restore(ConsumerState state)
    {
        deliverySequence = state.Delivered.Consumer + 1;
        streamSequence = state.Delivered.Stream + 1;
        pendingCountValid = false;
    }

    /// <summary>
    /// The next message of the last-per-subject list into <paramref name="message"/>; false once the list is done
    /// (the position then resumes after what the stream held at the start).
    /// </summary>
    public bool TryLoadFromSkipList(StoredMessage message)
    {
        if (skipList is not { } lasts)
        {
            return false;
        }

        while (skipIndex < lasts.Length)
        {
            var sequence = lasts[skipIndex++];
            if (skipIndex == lasts.Length)
            {
                streamSequence = skipResume + 1;
                skipList = null;
            }

            if (store.Load(sequence, message) == LoadStatus.Found)
            {
                return true;
            }
        }

        return false;
    }

    /// <summary>The next matching message at or after the position into <paramref name="message"/>, moving the position past what was scanned.</summary>
    public bool TryLoadNext(StoredMessage message)
    {
        var status = LoadNextMatch(streamSequence, message, out var scanned);
        if (scanned >= streamSequence)
        {
            streamSequence = scanned + 1;
        }

        return status == LoadStatus.Found;
    }

    /// <summary>Gives the next consumer sequence to a delivery.</summary>
    public ulong TakeDeliverySequence() => deliverySequence++;

    /// <summary>Moves the position back to a message taken but not delivered.</summary>
    public void Rewind(ulong sequence)
    {
        if (sequence < streamSequence)
        {
            streamSequence = sequence;
        }
    }

    /// <summary>Moves the position to <paramref name="first"/> when a purge removed what lay before it.</summary>
    public void SkipTo(ulong first)
    {
        if (streamSequence < first)
        {
            streamSequence = first;
        }

        pendingCountValid = false;
    }

    /// <summary>
    /// Matching messages at or after the position not yet delivered (nats-server <c>numPending</c>): computed from the
    /// store once, then kept up to date as messages are stored, delivered and removed.
    /// </summary>
    public ulong NumPending()
    {
        if (pendingCountValid)
        {
            return pendingCount;
        }

        ulong total = 0;
        ulong through = 0;
        if (skipList is not null)
        {
            // Last per subject: what is left of the list (the list exists only for that deliver policy).
            total = (ulong)(skipList.Length - skipIndex);
            through = skipResume;
        }
        else if (IsUnfiltered)
        {
            var count = store.NumPending(streamSequence, default, false);
            total = count.Total;
            through = count.ValidThrough;
        }
        else
        {
            byte[]? one = null;
            foreach (var filter in FiltersOf(filters, ref one))
            {
                var count = store.NumPending(streamSequence, filter, false);
                total += count.Total;
                through = Math.Max(through, count.ValidThrough);
            }
        }

        pendingCount = total;
        pendingCountThrough = through;
        pendingCountValid = true;
        return total;
    }

    /// <summary>
    /// Counts a first delivery of <paramref name="sequence"/> off the pending count when taken, as nats-server does
    /// before any pacing wait; true when it was counted (so <see cref="Uncount"/> can put it back).
    /// </summary>
    public bool CountOff(ulong sequence)
    {
        if (!pendingCountValid || pendingCount == 0 || sequence > pendingCountThrough)
        {
            return false;
        }

        pendingCount--;
        return true;
    }

    /// <summary>Puts back a message counted off by <see cref="CountOff"/> but not delivered.</summary>
    public void Uncount() => pendingCount++;

    /// <summary>A matching message was stored: one more pending when the count is known.</summary>
    public void OnStored(ulong sequence)
    {
        if (pendingCountValid && sequence > pendingCountThrough)
        {
            pendingCount++;
            pendingCountThrough = sequence;
        }
    }

    /// <summary>
    /// A message was removed (nats-server <c>decStreamPending</c>): one fewer pending when it was matching, ahead of the
    /// position and counted; several at once (or unknown ones) make the count unknown.
    /// </summary>
    /// <returns>Whether one known message was removed (false when several or unknown ones were).</returns>
    public bool OnRemoved(ulong sequence, bool matches, long messages)
    {
        if (messages != -1 || sequence == 0)
        {
            pendingCountValid = false;
            return false;
        }

        if (matches && pendingCountValid && sequence >= streamSequence && sequence <= pendingCountThrough && pendingCount > 0)
        {
            pendingCount--;
        }

        return true;
    }

    // Whether the consumer takes every subject (no filter, or ">"). Lock held.
    private bool IsUnfiltered => filters is byte[][] { Length: 0 };

    /// <summary>The filters held in <paramref name="held"/>: a single one through <paramref name="one"/>, the caller's local.</summary>
    private static ReadOnlySpan<byte[]> FiltersOf(object held, ref byte[]? one)
    {
        if (held is byte[][] several)
        {
            return several;
        }

        one = (byte[])held;
        return new ReadOnlySpan<byte[]>(ref one!);
    }

    private ulong LastMatching()
    {
        ulong last = 0;
        byte[]? one = null;
        foreach (var filter in FiltersOf(filters, ref one))
        {
            last = Math.Max(last, store.GetFilteredState(1, filter).Last);
        }

        return last;
    }

    /// <summary>The first message at or after <paramref name="start"/> matching any filter, into <paramref name="message"/>.</summary>
    private LoadStatus LoadNextMatch(ulong start, StoredMessage message, out ulong scanned)
    {
        byte[]? one = null;
        var current = FiltersOf(filters, ref one);
        if (current.Length <= 1)
        {
            return store.LoadNext(current.Length == 0 ? default : current[0], start, message, out scanned);
        }

        // Several filters: the nearest match of any.
        ulong best = 0;
        scanned = 0;
        foreach (var filter in current)
        {
            if (store.LoadNext(filter, start, message, out var found) == LoadStatus.Found && (best == 0 || found < best))
            {
                best = found;
            }

            scanned = Math.Max(scanned, found);
        }

        if (best == 0)
        {
            return LoadStatus.EndOfStream;
        }

        scanned = best;
        return store.Load(best, message);
    }
}
