using Broker.Abstractions;

namespace Broker.Storage.FileStore.Internal;

/// <summary>Loads: by sequence, next matching a filter, last matching a filter, by time.</summary>
internal sealed partial class FileStreamStore
{
    public LoadStatus Load(ulong sequence, StoredMessage message)
    {
        ArgumentNullException.ThrowIfNull(message);
        lock (sync)
        {
            ThrowIfUnusable();
            if (sequence > last || sequence == 0)
            {
                return sequence > last ? LoadStatus.EndOfStream : LoadStatus.NotFound;
            }

            var block = FindBlock(sequence);
            return block is not null && block.IsLive(sequence) && LoadLive(block, sequence, message) ? LoadStatus.Found : LoadStatus.NotFound;
        }
    }

    public LoadStatus LoadNext(ReadOnlySpan<byte> filter, ulong start, StoredMessage message, out ulong scanned)
    {
        ArgumentNullException.ThrowIfNull(message);
        lock (sync)
        {
            ThrowIfUnusable();
            scanned = last;
            if (start < first)
            {
                start = first;
            }

            if (start > last || messages == 0)
            {
                return LoadStatus.EndOfStream;
            }

            ulong stop = last;
            if (!SubjectFilter.IsAll(filter))
            {
                // The per-subject index bounds the scan: nothing matches before the earliest matching subject's first.
                var lowest = ulong.MaxValue;
                stop = 0;
                if (SubjectFilter.IsLiteral(filter))
                {
                    var index = subjects.Find(filter);
                    if (index >= 0 && subjects[index].Last >= start)
                    {
                        lowest = Math.Max(start, ResolveSubjectFirst(index));
                        stop = subjects[index].Last;
                    }
                }
                else
                {
                    foreach (var index in subjects.Indexes())
                    {
                        if (subjects[index].Last >= start && SubjectFilter.Matches(subjects[index].Subject, filter))
                        {
                            lowest = Math.Min(lowest, Math.Max(start, ResolveSubjectFirst(index)));
                            stop = Math.Max(stop, subjects[index].Last);
                        }
                    }
                }

                if (lowest == ulong.MaxValue)
                {
                    return LoadStatus.EndOfStream;
                }

                start = lowest;
            }

            for (var s = NextLiveSequence(start); s != 0 && s <= stop; s = NextLiveSequence(s + 1))
            {
                var block = FindBlock(s)!;
                if (SubjectFilter.IsAll(filter) || SubjectFilter.Matches(SubjectOf(block, s, out _), filter))
                {
                    if (LoadLive(block, s, message))
                    {
                        scanned = s;
                        return LoadStatus.Found;
                    }
                }
            }

            return LoadStatus.EndOfStream;
        }
    }

    public LoadStatus LoadLast(ReadOnlySpan<byte> filter, StoredMessage message)
    {
        ArgumentNullException.ThrowIfNull(message);
        lock (sync)
        {
            ThrowIfUnusable();
            if (messages == 0)
            {
                return LoadStatus.NotFound;
            }

            ulong sequence = 0;
            if (SubjectFilter.IsAll(filter))
            {
                sequence = PreviousLiveSequence(last);
            }
            else if (SubjectFilter.IsLiteral(filter))
            {
                var index = subjects.Find(filter);
                sequence = index >= 0 ? subjects[index].Last : 0;
            }
            else
            {
                foreach (var index in subjects.Indexes())
                {
                    if (subjects[index].Last > sequence && SubjectFilter.Matches(subjects[index].Subject, filter))
                    {
                        sequence = subjects[index].Last;
                    }
                }
            }

            var block = sequence == 0 ? null : FindBlock(sequence);
            return block is not null && LoadLive(block, sequence, message) ? LoadStatus.Found : LoadStatus.NotFound;
        }
    }

    public ulong GetSequenceFromTime(long timestamp)
    {
        lock (sync)
        {
            ThrowIfUnusable();
            if (messages == 0 || timestamp <= firstTimestamp)
            {
                return messages == 0 ? last + 1 : first;
            }

            foreach (var block in blocks)
            {
                if (!block.HasMessages || block.Messages == 0 || block.LastTimestamp < timestamp)
                {
                    continue;
                }

                for (var s = block.NextLive(block.First); s != 0; s = s < block.Last ? block.NextLive(s + 1) : 0)
                {
                    if (TimestampOf(block, s) >= timestamp)
                    {
                        return s;
                    }
                }
            }

            return last + 1;
        }
    }

    /// <summary>Copies a live message out; a record that fails to decrypt is counted lost, never served.</summary>
    private bool LoadLive(MessageBlock block, ulong sequence, StoredMessage message)
    {
        EnsureLoaded(block);
        var offset = block.OffsetOf(sequence);
        if (offset == MessageBlock.NoOffset || !block.IsLive(sequence))
        {
            return false;
        }

        if (ReadMessage(block, offset, message))
        {
            return true;
        }

        message.Clear();
        LoseMessage(block, sequence);
        return false;
    }
}
