using Broker.Storage.FileStore.Internal.Format;

namespace Broker.Storage.FileStore.Internal;

/// <summary>Block caches: loading a block's records on demand, reading subjects and timestamps, the bound and the expiry.</summary>
internal sealed partial class BlockSet
{
    /// <summary>
    /// Sealed blocks that keep their records in memory at most (the tail always does), restored at the end of each
    /// commit round and maintenance tick: with 8 MiB blocks a stream then holds at most 5 block caches plus
    /// <see cref="BlockBuffers.MaxFreeCaches"/> free ones, 56 MiB. Cache expiry drops idle ones sooner.
    /// </summary>
    internal const int MaxCachedSealedBlocks = 4;

    private long useClock;
    private bool trimWanted;

    /// <summary>More sealed blocks may be cached than the bound allows: trim between operations.</summary>
    public bool TrimWanted => trimWanted;

    /// <summary>Sealed blocks whose records are in memory.</summary>
    public int CachedSealedBlocks
    {
        get
        {
            var cached = 0;
            foreach (var block in blocks)
            {
                if (block != tail && block.Cache is not null)
                {
                    cached++;
                }
            }

            return cached;
        }
    }

    /// <summary>Loads a block's records into its cache, verifying each record's checksum.</summary>
    public void EnsureLoaded(MessageBlock block)
    {
        block.LastAccess = Environment.TickCount64;
        block.LastUse = ++useClock;
        if (block.Cache is not null)
        {
            return;
        }

        var file = block.File ??= fs.Open(block.Path, create: false);
        var raw = BlockReader.ReadRecords(file, block, buffers, out var length);
        block.Cache = raw;
        if (block.End == 0 || block.End > length)
        {
            block.End = length;
        }

        block.Flushed = block.Synced = block.End;
        IndexRecords(block, raw.AsSpan(0, (int)length), fromLoad: true);

        // Not here: a caller may still hold a span of another block's cache (a subject); the next commit round or
        // maintenance tick, between operations, trims.
        trimWanted = true;
    }

    /// <summary>
    /// Builds the offset table of a loaded block. Records that fail their checksum are skipped by resynchronising on
    /// the next valid record; live sequences left without a record are reported lost (<see cref="MessageLost"/>) and
    /// never served.
    /// </summary>
    public void IndexRecords(MessageBlock block, ReadOnlySpan<byte> records, bool fromLoad)
    {
        if (block.HasMessages)
        {
            for (var s = block.First; s <= block.Last; s++)
            {
                block.SetOffset(s, MessageBlock.NoOffset);
            }
        }

        var scanner = new RecordScanner(records);
        var previous = 0UL;
        while (scanner.Next(out var header, out var position))
        {
            // Records outside the range or out of order were cut off by a truncate; markers were applied on recovery.
            if (header.Kind == RecordKind.Message && header.Sequence > previous && block.InRange(header.Sequence))
            {
                previous = header.Sequence;
                block.SetOffset(header.Sequence, (uint)position);
            }
        }

        if (fromLoad && block.HasMessages)
        {
            for (var s = block.First; s <= block.Last; s++)
            {
                if (block.IsLive(s) && block.OffsetOf(s) == MessageBlock.NoOffset)
                {
                    MessageLost?.Invoke(block, s);
                }
            }
        }
    }

    /// <summary>The subject of the message at an offset of a loaded block (see <see cref="RecordCodec.SubjectAt"/>).</summary>
    public ReadOnlySpan<byte> SubjectAt(MessageBlock block, uint offset, out RecordHeader header) => codec.SubjectAt(block, offset, out header);

    /// <summary>The subject and accounted size of a live message (loading its block); empty and 0 when it has no record.</summary>
    public ReadOnlySpan<byte> SubjectOf(MessageBlock block, ulong sequence, out ulong size)
    {
        EnsureLoaded(block);
        var offset = block.OffsetOf(sequence);
        size = 0;
        if (offset == MessageBlock.NoOffset)
        {
            return [];
        }

        var subject = codec.SubjectAt(block, offset, out var header);
        size = RecordFormat.AccountedSize(header.SubjectLength, header.HeadersLength, header.PayloadLength(block.Encrypted));
        return subject;
    }

    /// <summary>The timestamp of a message (loading its block); 0 when it has no record.</summary>
    public long TimestampOf(MessageBlock block, ulong sequence)
    {
        EnsureLoaded(block);
        var offset = block.OffsetOf(sequence);
        return offset == MessageBlock.NoOffset ? 0 : RecordFormat.ReadVerified(block.Cache.AsSpan((int)offset)).Timestamp;
    }

    /// <summary>
    /// Keeps at most <see cref="MaxCachedSealedBlocks"/> sealed blocks' caches, dropping the least recently used whose
    /// bytes are all durable (their arrays go to the free list, for the next tail). Called between operations (the end
    /// of a commit round, the maintenance tick): an operation may hold spans of a cache. Files stay open (a commit
    /// round may be using them); the cache expiry closes idle ones.
    /// </summary>
    public void TrimSealedCaches()
    {
        var cached = CachedSealedBlocks;
        while (cached > MaxCachedSealedBlocks)
        {
            MessageBlock? oldest = null;
            foreach (var block in blocks)
            {
                if (block != tail && block.Cache is not null && block.Synced == block.End && (oldest is null || block.LastUse < oldest.LastUse))
                {
                    oldest = block;
                }
            }

            if (oldest is null)
            {
                // Not yet durable: the commit round that syncs them trims again.
                return;
            }

            oldest.ReleaseCache();
            cached--;
        }

        trimWanted = false;
    }

    /// <summary>
    /// Drops the caches of sealed, durable blocks not read for <paramref name="expiry"/> milliseconds, and closes their
    /// files (also of blocks whose cache the bound dropped earlier). Caller holds the I/O lock as well.
    /// </summary>
    public void EvictIdle(long now, long expiry)
    {
        foreach (var block in blocks)
        {
            if (block != tail && (block.Cache is not null || block.File is not null) && block.Synced == block.End && now - block.LastAccess >= expiry)
            {
                block.ReleaseCache();
                block.CloseFile();
            }
        }
    }

    /// <summary>A sealed block's records were rewritten to a new file (compaction): reload them from it.</summary>
    public void Reload(MessageBlock block)
    {
        block.CloseFile();
        block.ReleaseCache();
        block.End = 0;
        EnsureLoaded(block);
        block.Allocated = BlockFileHeader.Size + block.End;
    }
}
