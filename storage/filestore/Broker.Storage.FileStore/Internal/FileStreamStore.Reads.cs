using Broker.Abstractions;

namespace Broker.Storage.FileStore.Internal;

/// <summary>The contract's reads: loads by sequence, next or last matching a filter, by time; state and subject queries.</summary>
internal sealed partial class FileStreamStore
{
    public LoadStatus Load(ulong sequence, StoredMessage message)
    {
        ArgumentNullException.ThrowIfNull(message);
        lock (sync)
        {
            ThrowIfUnusable();
            if (sequence > ledger.Last || sequence == 0)
            {
                return sequence > ledger.Last ? LoadStatus.EndOfStream : LoadStatus.NotFound;
            }

            var block = blocks.Find(sequence);
            return block is not null && block.IsLive(sequence) && LoadLive(block, sequence, message) ? LoadStatus.Found : LoadStatus.NotFound;
        }
    }

    public LoadStatus LoadNext(ReadOnlySpan<byte> filter, ulong start, StoredMessage message, out ulong scanned)
    {
        ArgumentNullException.ThrowIfNull(message);
        lock (sync)
        {
            ThrowIfUnusable();
            scanned = ledger.Last;
            if (start < ledger.First)
            {
                start = ledger.First;
            }

            if (start > ledger.Last || ledger.Messages == 0)
            {
                return LoadStatus.EndOfStream;
            }

            var stop = ledger.Last;
            if (!SubjectFilter.IsAll(filter))
            {
                // The per-subject counters bound the scan: nothing matches before the earliest matching subject's first.
                if (!subjects.ScanBounds(filter, start, out start, out stop))
                {
                    return LoadStatus.EndOfStream;
                }
            }

            for (var s = blocks.NextLive(start); s != 0 && s <= stop; s = blocks.NextLive(s + 1))
            {
                var block = blocks.Find(s)!;
                if (SubjectFilter.IsAll(filter) || SubjectFilter.Matches(blocks.SubjectOf(block, s, out _), filter))
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
            if (ledger.Messages == 0)
            {
                return LoadStatus.NotFound;
            }

            var sequence = SubjectFilter.IsAll(filter) ? blocks.PreviousLive(ledger.Last) : subjects.LastMatching(filter);
            var block = sequence == 0 ? null : blocks.Find(sequence);
            return block is not null && LoadLive(block, sequence, message) ? LoadStatus.Found : LoadStatus.NotFound;
        }
    }

    public ulong GetSequenceFromTime(long timestamp)
    {
        lock (sync)
        {
            ThrowIfUnusable();
            if (ledger.Messages == 0 || timestamp <= ledger.FirstTimestamp)
            {
                return ledger.Messages == 0 ? ledger.Last + 1 : ledger.First;
            }

            var found = blocks.FirstLiveAtOrAfter(timestamp);
            return found != 0 ? found : ledger.Last + 1;
        }
    }

    public StreamState GetState()
    {
        lock (sync)
        {
            var messages = ledger.Messages;
            var deleted = messages == 0 ? 0 : (int)Math.Min(int.MaxValue, ledger.Last - ledger.First + 1 - messages);
            return new StreamState(messages, ledger.Bytes, ledger.First, messages == 0 ? 0 : ledger.FirstTimestamp, ledger.Last, ledger.LastTimestamp, subjects.Count, deleted);
        }
    }

    public IReadOnlyList<ulong> GetDeletedSequences()
    {
        lock (sync)
        {
            return ledger.Messages == 0 ? new List<ulong>() : blocks.NotLiveBetween(ledger.First, ledger.Last);
        }
    }

    public SubjectState GetFilteredState(ulong start, ReadOnlySpan<byte> filter)
    {
        lock (sync)
        {
            return FilteredStateLocked(start, filter);
        }
    }

    public IReadOnlyDictionary<string, SubjectState> GetSubjectsState(string filter)
    {
        var filterBytes = System.Text.Encoding.UTF8.GetBytes(filter ?? "");
        lock (sync)
        {
            return subjects.Snapshot(filterBytes);
        }
    }

    public PendingCount NumPending(ulong start, ReadOnlySpan<byte> filter, bool lastPerSubject)
    {
        lock (sync)
        {
            var pending = lastPerSubject ? subjects.CountLastPerSubject(start, filter) : FilteredStateLocked(start, filter).Messages;
            return new PendingCount(pending, ledger.Last);
        }
    }

    private SubjectState FilteredStateLocked(ulong start, ReadOnlySpan<byte> filter)
    {
        if (start < ledger.First)
        {
            start = ledger.First;
        }

        if (ledger.Messages == 0 || start > ledger.Last)
        {
            return default;
        }

        if (!SubjectFilter.IsAll(filter))
        {
            return subjects.MatchingState(start, filter);
        }

        return start == ledger.First ? new SubjectState(ledger.Messages, ledger.First, blocks.PreviousLive(ledger.Last)) : blocks.LiveFrom(start);
    }

    /// <summary>Copies a live message out; a record that fails to decrypt is counted lost, never served.</summary>
    private bool LoadLive(MessageBlock block, ulong sequence, StoredMessage message)
    {
        blocks.EnsureLoaded(block);
        var offset = block.OffsetOf(sequence);
        if (offset == MessageBlock.NoOffset || !block.IsLive(sequence))
        {
            return false;
        }

        if (RecordCodec.ReadMessage(block, offset, message))
        {
            return true;
        }

        message.Clear();
        ledger.LoseMessage(block, sequence);
        return false;
    }
}
