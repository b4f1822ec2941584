using System.Diagnostics;
using Broker.Abstractions;
using Broker.Storage.FileStore.Internal.Format;

namespace Broker.Storage.FileStore.Internal;

/// <summary>
/// The background work of a stream: the committer loop, and a timer that expires messages by age, drops idle block
/// caches, seals blocks (trims their preallocated tail, compresses them), asks for checkpoints and, under a sync
/// interval, for the periodic fsync.
/// </summary>
internal sealed partial class FileStreamStore
{
    private Task? committer;
    private Timer? timer;
    private volatile bool stopping;

    // Rounds that start at once after a refill wait ran out (committer thread only).
    private const int RefillSkipsAfterMiss = 16;
    private int refillSkips;
    private int ticking;

    private void StartBackground()
    {
        committer = Task.Run(RunCommitterAsync);
        var period = TimeSpan.FromSeconds(1);
        if (config.MaxAge > TimeSpan.Zero && config.MaxAge < TimeSpan.FromSeconds(4))
        {
            period = TimeSpan.FromMilliseconds(Math.Max(10, config.MaxAge.TotalMilliseconds / 4));
        }

        timer = new Timer(_ => Tick(), null, period, period);
    }

    private async Task StopBackgroundAsync()
    {
        stopping = true;
        if (timer is not null)
        {
            await timer.DisposeAsync().ConfigureAwait(false);
        }

        signal.Release();
        if (committer is not null)
        {
            await committer.ConfigureAwait(false);
        }
    }

    private async Task RunCommitterAsync()
    {
        while (true)
        {
            await signal.WaitAsync().ConfigureAwait(false);
            if (stopping)
            {
                return;
            }

            WaitForRefill();

            lock (ioSync)
            {
                if (failure is not null || stopping)
                {
                    continue;
                }

                CommitRound(force: false, checkpoint: false, closing: false);
            }
        }
    }

    /// <summary>
    /// Group commit for small windows. A round's acknowledgements release as many publishes as it covered, which come
    /// back a round trip later; starting the next sync at once would leave them for the one after, so rounds would
    /// alternate between two halves of the publishers' window (about W/2 acknowledgements per sync). Waiting for them,
    /// at most about one sync's duration (50 µs to 1 ms), lets one sync cover the whole window. A lone synchronous
    /// publisher (a round of one) never waits, and after a wait that ran out the next 16 rounds do not wait (a
    /// server-bound pace: a large window, or publishers that do not wait). Runs on the committer, yielding the CPU.
    /// </summary>
    private void WaitForRefill()
    {
        var target = Volatile.Read(ref refillTarget);
        if (target <= 1)
        {
            return;
        }

        if (refillSkips > 0)
        {
            // The last wait ran out: publishers are not waiting on acknowledgements (or the server, not the window,
            // sets the pace). Waiting would only delay syncs and burn CPU; try again in a few rounds.
            refillSkips--;
            return;
        }

        var cap = Math.Clamp(Volatile.Read(ref lastSyncDuration), Stopwatch.Frequency / 20_000, Stopwatch.Frequency / 1_000);
        var start = Stopwatch.GetTimestamp();
        while (Volatile.Read(ref appendsSinceRound) < target)
        {
            if (Stopwatch.GetTimestamp() - start >= cap || stopping)
            {
                refillSkips = RefillSkipsAfterMiss;
                return;
            }

            Thread.Yield();
        }
    }

    private void Tick()
    {
        if (stopping || Interlocked.Exchange(ref ticking, 1) == 1)
        {
            return;
        }

        try
        {
            lock (ioSync)
            {
                if (stopping || failure is not null)
                {
                    return;
                }

                lock (sync)
                {
                    ExpireByAge();
                    if (subjectsSuspect)
                    {
                        RebuildSubjects();
                    }

                    var now = Environment.TickCount64;
                    if (now - lastCheckpointTicks >= (long)options.CheckpointInterval.TotalMilliseconds && HasChangesSinceCheckpoint())
                    {
                        checkpointWanted = true;
                    }

                    if (options.SyncInterval is { } interval && now - lastSyncTicks >= (long)interval.TotalMilliseconds)
                    {
                        forceSyncWanted = true;
                        ScheduleCommit();
                    }

                    if (checkpointWanted || graveyard.Count > 0)
                    {
                        ScheduleCommit();
                    }

                    EvictCaches(now);
                    if (trimWanted)
                    {
                        TrimSealedCaches();
                    }
                }

                SealBlocks();
                CompactBlocks();
            }
        }
        catch (Exception ex) when (ex is IOException or UnauthorizedAccessException or InvalidDataException)
        {
            Fail(ex);
        }
        finally
        {
            Volatile.Write(ref ticking, 0);
        }

        DrainRemovalEvents();
    }

    private bool HasChangesSinceCheckpoint() => tail is null ? graveyard.Count > 0 || last > 0 : tail.End > 0 || graveyard.Count > 0;

    /// <summary>Removes messages older than <c>max_age</c> from the head. Caller holds <c>sync</c>.</summary>
    private void ExpireByAge()
    {
        if (config.MaxAge <= TimeSpan.Zero || messages == 0)
        {
            return;
        }

        var cutoff = NowNanoseconds(0) - (config.MaxAge.Ticks * 100);
        var removed = false;
        while (messages > 0 && firstTimestamp <= cutoff && firstTimestamp != 0)
        {
            if (!RemoveLive(first, RemovalReason.Limit))
            {
                break;
            }

            removed = true;
        }

        if (removed)
        {
            ScheduleCommit();
        }
    }

    /// <summary>
    /// Drops the caches of sealed, durable blocks not read for <see cref="FileStoreOptions.CacheExpiry"/>, and closes
    /// their files (also of blocks whose cache the bound dropped earlier). Caller holds <c>ioSync</c> and <c>sync</c>.
    /// </summary>
    private void EvictCaches(long now)
    {
        var expiry = (long)options.CacheExpiry.TotalMilliseconds;
        foreach (var block in blocks)
        {
            if (block != tail && (block.Cache is not null || block.File is not null) && block.Synced == block.End && now - block.LastAccess >= expiry)
            {
                block.ReleaseCache();
                block.CloseFile();
            }
        }
    }

    // Sealed blocks are compressed when the stream asks for it (compression: s2) or the store does for every stream
    // (filestore { compression: snappy }); read under sync or ioSync, as the configuration changes under both.
    private bool Compresses => config.Compression == StreamCompression.S2 || options.Compression == FileStoreCompression.Snappy;

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
                if (block.Sealed && block != tail && block.Synced == block.End && !block.Compressed && block.Allocated > BlockFileHeader.Size + block.End)
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

    /// <summary>Rebuilds the per-subject index from the live messages (after a record was found corrupt). Caller holds <c>sync</c>.</summary>
    private void RebuildSubjects()
    {
        subjectsSuspect = false;
        subjects.Clear();
        for (var s = NextLiveSequence(first); s != 0; s = NextLiveSequence(s + 1))
        {
            var block = FindBlock(s)!;
            var subject = SubjectOf(block, s, out var size);
            if (size > 0)
            {
                AddToSubject(subject, s);
            }
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
                if (block == tail || !block.Sealed || block.Synced < block.End || block.End < 64 * 1024)
                {
                    continue;
                }

                // Live bytes as stored, approximated from the accounted size (both count the same message bytes).
                if (block.Bytes * 2 >= (ulong)block.End)
                {
                    continue;
                }

                EnsureLoaded(block);
                work.Add((block, CompactedRecords(block)));
                if (work.Count >= 4)
                {
                    break;
                }
            }
        }

        var header = new byte[Format.BlockFileHeader.Size];
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
                    Format.BlockFileHeader.Write(header, block.Flags, block.Salt);
                    file.SetLength(0);
                    file.Write(header, 0);
                    file.Write(records, Format.BlockFileHeader.Size);
                    file.Sync();
                }

                block.CloseFile();
                fs.Rename(temporary, block.Path);
                fs.SyncDirectory(blocksDirectory);
            }

            lock (sync)
            {
                block.CloseFile();
                block.ReleaseCache();
                block.End = 0;
                pendingRewrites.RemoveAll(r => r.Block == block);
                EnsureLoaded(block);
                block.Allocated = Format.BlockFileHeader.Size + block.End;
            }
        }
    }

    /// <summary>The records a compacted block keeps. Caller holds <c>sync</c>; the block is loaded.</summary>
    private byte[] CompactedRecords(MessageBlock block)
    {
        var output = new BinaryBuilderSpan((int)block.End);
        var scanner = new Format.RecordScanner(block.Cache.AsSpan(0, (int)block.End));
        var lastHead = -1;
        var lastHeadLength = 0;
        while (scanner.Next(out var header, out var offset))
        {
            var record = block.Cache.AsSpan(offset, header.Length);
            switch (header.Kind)
            {
                case Format.RecordKind.Message when block.IsLive(header.Sequence) && block.OffsetOf(header.Sequence) == (uint)offset:
                case Format.RecordKind.Tombstone when header.Sequence >= first && header.Sequence < block.First:
                case Format.RecordKind.Truncate:
                    output.Append(record);
                    break;
                case Format.RecordKind.Head:
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
    private sealed class BinaryBuilderSpan(int capacity)
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
