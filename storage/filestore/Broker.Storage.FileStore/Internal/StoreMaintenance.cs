using Broker.Abstractions;
using Broker.Storage.FileStore.Internal.Format;
using Broker.Storage.FileStore.Internal.Io;

namespace Broker.Storage.FileStore.Internal;

/// <summary>
/// The periodic work of a stream, on a timer (every second, or a quarter of a short <c>max_age</c>): expires messages
/// by age and by their own time to live, rebuilds suspect per-subject counters, asks for checkpoints and, under a sync interval, for the periodic
/// fsync, drops idle block caches, seals blocks (trims their preallocated tail, compresses them) and compacts blocks
/// that are mostly removed messages. One tick at a time, under the committer's <c>ioSync</c>.
/// </summary>
[System.Diagnostics.CodeAnalysis.SuppressMessage("Design", "CA1001", Justification = "The timer is disposed by StopAsync, which closing or deleting the store awaits; the store is its only owner.")]
internal sealed class StoreMaintenance
{
    private readonly object ioSync;
    private readonly object sync;
    private readonly IStorageFileSystem fs;
    private readonly string blocksDirectory;
    private readonly FileStoreOptions options;
    private readonly Func<StreamStoreConfig> config;
    private readonly BlockSet blocks;
    private readonly StreamLedger ledger;
    private readonly SubjectCounters subjects;
    private readonly StreamCheckpoint checkpoints;
    private readonly StreamCommitter committer;
    private readonly Action afterTick;

    private Timer? timer;
    private volatile bool stopping;
    private int ticking;

    public StoreMaintenance(
        object sync,
        IStorageFileSystem fs,
        string blocksDirectory,
        FileStoreOptions options,
        Func<StreamStoreConfig> config,
        BlockSet blocks,
        StreamLedger ledger,
        SubjectCounters subjects,
        StreamCheckpoint checkpoints,
        StreamCommitter committer,
        Action afterTick)
    {
        ioSync = committer.IoSync;
        this.sync = sync;
        this.fs = fs;
        this.blocksDirectory = blocksDirectory;
        this.options = options;
        this.config = config;
        this.blocks = blocks;
        this.ledger = ledger;
        this.subjects = subjects;
        this.checkpoints = checkpoints;
        this.committer = committer;
        this.afterTick = afterTick;
    }

    // Sealed blocks are compressed when the stream asks for it (compression: s2) or the store does for every stream
    // (filestore { compression: snappy }); read under sync or ioSync, as the configuration changes under both.
    private bool Compresses => config().Compression == StreamCompression.S2 || options.Compression == FileStoreCompression.Snappy;

    public void Start()
    {
        var maxAge = config().MaxAge;
        var period = TimeSpan.FromSeconds(1);
        if (maxAge > TimeSpan.Zero && maxAge < TimeSpan.FromSeconds(4))
        {
            period = TimeSpan.FromMilliseconds(Math.Max(10, maxAge.TotalMilliseconds / 4));
        }

        timer = new Timer(_ => Tick(), null, period, period);
    }

    /// <summary>Stops the timer and waits for a running tick.</summary>
    public async Task StopAsync()
    {
        stopping = true;
        if (timer is not null)
        {
            await timer.DisposeAsync().ConfigureAwait(false);
        }
    }

    internal void Tick()
    {
        if (stopping || Interlocked.Exchange(ref ticking, 1) == 1)
        {
            return;
        }

        try
        {
            lock (ioSync)
            {
                if (stopping || committer.Failed)
                {
                    return;
                }

                lock (sync)
                {
                    if (ledger.ExpireByAge(config()) | ledger.ExpireByTtl())
                    {
                        committer.ScheduleCommit();
                    }

                    if (subjects.Suspect)
                    {
                        subjects.Rebuild(ledger.First);
                    }

                    var now = Environment.TickCount64;
                    if (checkpoints.IntervalElapsed(now, options.CheckpointInterval) && HasChangesSinceCheckpoint())
                    {
                        checkpoints.Request();
                    }

                    committer.RequestIntervalSync(now);
                    if (checkpoints.Wanted || blocks.HasBuried)
                    {
                        committer.ScheduleCommit();
                    }

                    blocks.EvictIdle(now, (long)options.CacheExpiry.TotalMilliseconds);
                    if (blocks.TrimWanted)
                    {
                        blocks.TrimSealedCaches();
                    }
                }

                SealBlocks();
                CompactBlocks();
            }
        }
        catch (Exception ex) when (ex is IOException or UnauthorizedAccessException or InvalidDataException)
        {
            committer.Fail(ex);
        }
        finally
        {
            Volatile.Write(ref ticking, 0);
        }

        afterTick();
    }

    private bool HasChangesSinceCheckpoint() => blocks.Tail is not { } tail ? blocks.HasBuried || ledger.Last > 0 : tail.End > 0 || blocks.HasBuried;

    /// <summary>
    /// Sealed blocks whose bytes are all durable: cut the preallocated tail, and compress them when configured.
    /// Caller holds <c>ioSync</c> (not <c>sync</c>: compression runs outside it).
    /// </summary>
    private void SealBlocks()
    {
        List<(MessageBlock Block, byte[]? Records)> work = [];
        lock (sync)
        {
            foreach (var block in blocks)
            {
                if (block.Sealed && block != blocks.Tail && block.Synced == block.End && !block.Compressed && block.Allocated > BlockFileHeader.Size + block.End)
                {
                    var wantsCompression = Compresses && block.Cache is not null;
                    work.Add((block, wantsCompression ? block.Cache.AsSpan(0, (int)block.End).ToArray() : null));
                }
            }
        }

        foreach (var (block, records) in work)
        {
            var file = block.File ??= fs.Open(block.Path, create: false);
            if (records is not null)
            {
                BlockReader.WriteCompressed(fs, block, records);
                block.CloseFile();
                lock (sync)
                {
                    block.Flags |= BlockFileHeader.Compressed;
                }
            }
            else
            {
                file.SetLength(BlockFileHeader.Size + block.End);
            }

            block.Allocated = BlockFileHeader.Size + block.End;
        }
    }

    /// <summary>
    /// Rewrites sealed blocks that are mostly removed messages (interior deletes: KV updates, per-subject limits,
    /// acknowledged work-queue messages) keeping their live records, the tombstones still needed (for messages of
    /// earlier blocks still on disk) and the last head marker; the new file replaces the old one atomically
    /// (temporary file, fsync, rename, directory fsync). Caller holds <c>ioSync</c>.
    /// </summary>
    private void CompactBlocks()
    {
        List<(MessageBlock Block, byte[] Records)> work = [];
        lock (sync)
        {
            foreach (var block in blocks)
            {
                if (block == blocks.Tail || !block.Sealed || block.Synced < block.End || block.End < 64 * 1024)
                {
                    continue;
                }

                // Live bytes as stored, approximated from the accounted size (both count the same message bytes).
                if (block.Bytes * 2 >= (ulong)block.End)
                {
                    continue;
                }

                blocks.EnsureLoaded(block);
                work.Add((block, CompactedRecords(block, ledger.First)));
                if (work.Count >= 4)
                {
                    break;
                }
            }
        }

        var header = new byte[BlockFileHeader.Size];
        foreach (var (block, records) in work)
        {
            var temporary = block.Path + ".tmp";
            if (block.Compressed)
            {
                BlockReader.WriteCompressed(fs, block, records);
            }
            else
            {
                using (var file = fs.Open(temporary, create: true))
                {
                    BlockFileHeader.Write(header, block.Flags, block.Salt);
                    file.SetLength(0);
                    file.Write(header, 0);
                    file.Write(records, BlockFileHeader.Size);
                    file.Sync();
                }

                block.CloseFile();
                fs.Rename(temporary, block.Path);
                fs.SyncDirectory(blocksDirectory);
            }

            lock (sync)
            {
                ledger.ForgetRewrites(block);
                blocks.Reload(block);
            }
        }
    }

    /// <summary>The records a compacted block keeps (<paramref name="first"/> is the stream's). The block is loaded.</summary>
    private static byte[] CompactedRecords(MessageBlock block, ulong first)
    {
        var output = new RecordAccumulator((int)block.End);
        var scanner = new RecordScanner(block.Cache.AsSpan(0, (int)block.End));
        var lastHead = -1;
        var lastHeadLength = 0;
        while (scanner.Next(out var header, out var offset))
        {
            var record = block.Cache.AsSpan(offset, header.Length);
            switch (header.Kind)
            {
                case RecordKind.Message when block.IsLive(header.Sequence) && block.OffsetOf(header.Sequence) == (uint)offset:
                case RecordKind.Tombstone when header.Sequence >= first && header.Sequence < block.First:
                case RecordKind.Ttl when block.IsLive(header.Sequence):
                case RecordKind.Truncate:
                    output.Append(record);
                    break;
                case RecordKind.Head:
                    lastHead = offset;
                    lastHeadLength = header.Length;
                    break;
            }
        }

        if (lastHead >= 0)
        {
            output.Append(block.Cache.AsSpan(lastHead, lastHeadLength));
        }

        return output.ToArray();
    }

    /// <summary>A byte accumulator for compaction.</summary>
    private sealed class RecordAccumulator(int capacity)
    {
        private byte[] buffer = new byte[Math.Max(capacity, 64)];
        private int length;

        public void Append(ReadOnlySpan<byte> data)
        {
            if (length + data.Length > buffer.Length)
            {
                Array.Resize(ref buffer, Math.Max(buffer.Length * 2, length + data.Length));
            }

            data.CopyTo(buffer.AsSpan(length));
            length += data.Length;
        }

        public byte[] ToArray() => buffer.AsSpan(0, length).ToArray();
    }
}
