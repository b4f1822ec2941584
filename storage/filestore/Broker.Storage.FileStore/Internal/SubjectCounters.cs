using Broker.Abstractions;

namespace Broker.Storage.FileStore.Internal;

/// <summary>
/// The per-subject state of a stream (nats-server's <c>psim</c>): for each subject its message count and its first
/// and last sequence, kept as messages are appended and removed. A removed first sequence is resolved lazily (a
/// stale first is a lower bound, scanned forward on demand), a removed last is scanned backward at once; both scans
/// read subjects from the <see cref="BlockSet"/>. When a record was found corrupt the counters are suspect and
/// rebuilt from the live messages. Answers the subject-filtered queries. Not thread-safe: the stream store's lock
/// guards every call.
/// </summary>
internal sealed class SubjectCounters(BlockSet blocks)
{
    private readonly SubjectIndex index = new();
    private bool suspect;

    public int Count => index.Count;

    /// <summary>A live message's subject is unknown (its record was lost): <see cref="Rebuild"/> at the next tick.</summary>
    public bool Suspect => suspect;

    public ref SubjectEntry this[int entry] => ref index[entry];

    public int Find(ReadOnlySpan<byte> subject) => index.Find(subject);

    /// <summary>The entry indexes in use (for iteration; the order is arbitrary).</summary>
    public IEnumerable<int> Indexes() => index.Indexes();

    public void MarkSuspect() => suspect = true;

    public void Clear() => index.Clear();

    /// <summary>Counts a message appended (or replayed) with <paramref name="sequence"/>, the subject's newest.</summary>
    public void Add(ReadOnlySpan<byte> subject, ulong sequence)
    {
        ref var entry = ref index[index.GetOrAdd(subject)];
        if (entry.Count == 0)
        {
            entry.First = sequence;
            entry.FirstStale = false;
        }

        entry.Count++;
        entry.Last = sequence;
    }

    /// <summary>Restores one subject's state from a checkpoint.</summary>
    public void Restore(ReadOnlySpan<byte> subject, ulong count, ulong first, ulong last, bool firstStale)
    {
        ref var entry = ref index[index.GetOrAdd(subject)];
        entry.Count = count;
        entry.First = first;
        entry.Last = last;
        entry.FirstStale = firstStale;
    }

    /// <summary>Uncounts a removed message; the subject goes when it was its last message.</summary>
    public void Remove(ReadOnlySpan<byte> subject, ulong sequence)
    {
        var found = index.Find(subject);
        if (found < 0)
        {
            return;
        }

        ref var entry = ref index[found];
        if (--entry.Count == 0)
        {
            index.Remove(found);
            return;
        }

        if (entry.First == sequence)
        {
            entry.First = sequence + 1;
            entry.FirstStale = true;
        }

        if (entry.Count == 1)
        {
            if (entry.Last != sequence)
            {
                // The one left is the last.
                entry.First = entry.Last;
                entry.FirstStale = false;
            }
            else if (!entry.FirstStale)
            {
                entry.Last = entry.First;
            }
            else
            {
                entry.Last = entry.First = Scan(entry.Subject, sequence - 1, entry.First, forward: false);
                entry.FirstStale = false;
            }
        }
        else if (entry.Last == sequence)
        {
            entry.Last = Scan(entry.Subject, sequence - 1, entry.First, forward: false);
        }
    }

    /// <summary>The first sequence of a subject, looked up when it is stale.</summary>
    public ulong ResolveFirst(int entry)
    {
        ref var state = ref index[entry];
        if (!state.FirstStale)
        {
            return state.First;
        }

        var found = state.Count == 1 ? state.Last : Scan(state.Subject, state.First, state.Last, forward: true);
        index[entry].First = found;
        index[entry].FirstStale = found == 0;
        return found;
    }

    /// <summary>Rebuilds the counters from the live messages from <paramref name="first"/> on (after a record was found corrupt).</summary>
    public void Rebuild(ulong first)
    {
        suspect = false;
        index.Clear();
        for (var s = blocks.NextLive(first); s != 0; s = blocks.NextLive(s + 1))
        {
            var subject = blocks.SubjectOf(blocks.Find(s)!, s, out var size);
            if (size > 0)
            {
                Add(subject, s);
            }
        }
    }

    /// <summary>
    /// Messages matching a filter (not the full wildcard) at or after <paramref name="start"/>: whole subjects that lie
    /// at or after it count from the counters, a subject straddling it is scanned.
    /// </summary>
    public SubjectState MatchingState(ulong start, ReadOnlySpan<byte> filter)
    {
        ulong total = 0, lowest = 0, highest = 0;
        var literal = SubjectFilter.IsLiteral(filter);
        foreach (var entry in index.Indexes())
        {
            if (index[entry].Last < start || (literal ? !index[entry].Subject.AsSpan().SequenceEqual(filter) : !SubjectFilter.Matches(index[entry].Subject, filter)))
            {
                continue;
            }

            var subjectFirst = ResolveFirst(entry);
            ulong count;
            ulong from;
            if (subjectFirst >= start)
            {
                count = index[entry].Count;
                from = subjectFirst;
            }
            else
            {
                (count, from) = CountFrom(index[entry].Subject, start, index[entry].Last);
            }

            if (count == 0)
            {
                continue;
            }

            total += count;
            lowest = lowest == 0 ? from : Math.Min(lowest, from);
            highest = Math.Max(highest, index[entry].Last);
        }

        return new SubjectState(total, lowest, highest);
    }

    /// <summary>
    /// The sequences a scan for <paramref name="filter"/> from <paramref name="start"/> must cover: nothing matches
    /// before the earliest matching subject's first or after the latest one's last. False when nothing matches.
    /// </summary>
    public bool ScanBounds(ReadOnlySpan<byte> filter, ulong start, out ulong lowest, out ulong stop)
    {
        lowest = ulong.MaxValue;
        stop = 0;
        if (SubjectFilter.IsLiteral(filter))
        {
            var entry = index.Find(filter);
            if (entry >= 0 && index[entry].Last >= start)
            {
                lowest = Math.Max(start, ResolveFirst(entry));
                stop = index[entry].Last;
            }
        }
        else
        {
            foreach (var entry in index.Indexes())
            {
                if (index[entry].Last >= start && SubjectFilter.Matches(index[entry].Subject, filter))
                {
                    lowest = Math.Min(lowest, Math.Max(start, ResolveFirst(entry)));
                    stop = Math.Max(stop, index[entry].Last);
                }
            }
        }

        return lowest != ulong.MaxValue;
    }

    /// <summary>The last sequence of the subjects matching a filter (not the full wildcard), or 0.</summary>
    public ulong LastMatching(ReadOnlySpan<byte> filter)
    {
        if (SubjectFilter.IsLiteral(filter))
        {
            var entry = index.Find(filter);
            return entry >= 0 ? index[entry].Last : 0;
        }

        ulong sequence = 0;
        foreach (var entry in index.Indexes())
        {
            if (index[entry].Last > sequence && SubjectFilter.Matches(index[entry].Subject, filter))
            {
                sequence = index[entry].Last;
            }
        }

        return sequence;
    }

    /// <summary>Subjects matching a filter whose last message is at or after <paramref name="start"/>.</summary>
    public ulong CountLastPerSubject(ulong start, ReadOnlySpan<byte> filter)
    {
        ulong total = 0;
        foreach (var entry in index.Indexes())
        {
            if (index[entry].Last >= start && SubjectFilter.Matches(index[entry].Subject, filter))
            {
                total++;
            }
        }

        return total;
    }

    /// <summary>The state of each subject matching a filter, by subject.</summary>
    public Dictionary<string, SubjectState> Snapshot(ReadOnlySpan<byte> filter)
    {
        var result = new Dictionary<string, SubjectState>(StringComparer.Ordinal);
        foreach (var entry in index.Indexes())
        {
            if (SubjectFilter.Matches(index[entry].Subject, filter))
            {
                var subjectFirst = ResolveFirst(entry);
                result[SubjectIndex.ToText(index[entry].Subject)] = new SubjectState(index[entry].Count, subjectFirst, index[entry].Last);
            }
        }

        return result;
    }

    private (ulong Count, ulong First) CountFrom(byte[] subject, ulong start, ulong stop)
    {
        ulong count = 0, firstFound = 0;
        for (var s = blocks.NextLive(start); s != 0 && s <= stop; s = blocks.NextLive(s + 1))
        {
            if (blocks.SubjectOf(blocks.Find(s)!, s, out _).SequenceEqual(subject))
            {
                count++;
                firstFound = firstFound == 0 ? s : firstFound;
            }
        }

        return (count, firstFound);
    }

    /// <summary>The nearest live message of <paramref name="subject"/> from <paramref name="from"/> towards <paramref name="bound"/>, or 0.</summary>
    private ulong Scan(byte[] subject, ulong from, ulong bound, bool forward)
    {
        var s = forward ? blocks.NextLive(from) : blocks.PreviousLive(from);
        while (s != 0 && (forward ? s <= bound : s >= bound))
        {
            if (blocks.SubjectOf(blocks.Find(s)!, s, out _).SequenceEqual(subject))
            {
                return s;
            }

            s = forward ? blocks.NextLive(s + 1) : (s > 1 ? blocks.PreviousLive(s - 1) : 0);
        }

        return 0;
    }
}
