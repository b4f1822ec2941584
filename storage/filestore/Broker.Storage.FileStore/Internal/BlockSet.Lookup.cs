using Broker.Abstractions;

namespace Broker.Storage.FileStore.Internal;

/// <summary>Lookups over the blocks by sequence and by time: the block holding a sequence, live sequences, gaps.</summary>
internal sealed partial class BlockSet
{
    /// <summary>The index of the block whose range holds <paramref name="sequence"/>, or -1.</summary>
    public int FindIndex(ulong sequence)
    {
        int lo = 0, hi = blocks.Count - 1, found = -1;
        while (lo <= hi)
        {
            var mid = (lo + hi) >>> 1;
            if (blocks[mid].Last >= sequence)
            {
                found = mid;
                hi = mid - 1;
            }
            else
            {
                lo = mid + 1;
            }
        }

        if (found < 0)
        {
            return -1;
        }

        // Blocks without messages have an empty range ending where the previous one ends; skip to one holding it.
        while (found < blocks.Count && !blocks[found].InRange(sequence))
        {
            if (blocks[found].HasMessages && blocks[found].First > sequence)
            {
                return -1;
            }

            found++;
        }

        return found < blocks.Count ? found : -1;
    }

    public MessageBlock? Find(ulong sequence)
    {
        var index = FindIndex(sequence);
        return index < 0 ? null : blocks[index];
    }

    /// <summary>The first live sequence at or after <paramref name="from"/>, or 0.</summary>
    public ulong NextLive(ulong from)
    {
        var index = FindIndex(from);
        if (index < 0)
        {
            // In a gap between blocks: start at the first block after it (a loop: a lambda capturing "from" would
            // allocate its closure on every call, this runs per message scanned).
            index = 0;
            while (index < blocks.Count && !(blocks[index].HasMessages && blocks[index].First > from))
            {
                index++;
            }
        }

        for (; index < blocks.Count; index++)
        {
            var found = blocks[index].NextLive(from);
            if (found != 0)
            {
                return found;
            }
        }

        return 0;
    }

    /// <summary>The last live sequence at or before <paramref name="from"/>, or 0.</summary>
    public ulong PreviousLive(ulong from)
    {
        for (var index = blocks.Count - 1; index >= 0; index--)
        {
            var block = blocks[index];
            if (!block.HasMessages || block.First > from)
            {
                continue;
            }

            var found = block.PreviousLive(from);
            if (found != 0)
            {
                return found;
            }
        }

        return 0;
    }

    /// <summary>The sequences from <paramref name="first"/> to <paramref name="last"/> that are not live (removed, erased, skipped).</summary>
    public List<ulong> NotLiveBetween(ulong first, ulong last)
    {
        var deleted = new List<ulong>();
        var expected = first;
        for (var s = NextLive(first); s != 0 && s <= last; s = NextLive(s + 1))
        {
            for (; expected < s; expected++)
            {
                deleted.Add(expected);
            }

            expected = s + 1;
        }

        return deleted;
    }

    /// <summary>The live messages from <paramref name="start"/> on: how many, the first and the last.</summary>
    public SubjectState LiveFrom(ulong start)
    {
        var count = 0UL;
        var firstFound = 0UL;
        var lastFound = 0UL;
        for (var s = NextLive(start); s != 0; s = NextLive(s + 1))
        {
            count++;
            firstFound = firstFound == 0 ? s : firstFound;
            lastFound = s;
        }

        return new SubjectState(count, firstFound, lastFound);
    }

    /// <summary>The first live message stored at or after <paramref name="timestamp"/> (loading blocks), or 0.</summary>
    public ulong FirstLiveAtOrAfter(long timestamp)
    {
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

        return 0;
    }
}
