using System.Diagnostics;
using Broker.Storage.FileStore.Internal.Format;
using Broker.Storage.FileStore.Internal.Io;

namespace Broker.Storage.FileStore.Internal;

/// <summary>One commit round: take the bytes under the state lock, write and sync them outside it, then complete the waits.</summary>
internal sealed partial class StreamCommitter
{
    private readonly List<(MessageBlock Block, byte[] Cache, int From, int To)> regions = [];
    private readonly List<(MessageBlock Block, long Offset, byte[] Bytes)> rewrites = [];
    private readonly List<MessageBlock> touched = [];

    /// <summary>
    /// One round. Caller holds <c>ioSync</c>. <paramref name="force"/> fsyncs even under a sync interval;
    /// <paramref name="withCheckpoint"/> writes <c>index.db</c> after the data it describes is durable;
    /// <paramref name="closing"/> also sets the sequence reservation to the exact last sequence (a clean stop: no jump
    /// on the next start).
    /// </summary>
    private void CommitRound(bool force, bool withCheckpoint, bool closing)
    {
        ulong roundLast;
        long taken;
        TaskCompletionSource? roundWaiters;
        bool directorySync;
        ulong reserve;
        byte[]? snapshot = null;
        MessageBlock[] buried = [];
        bool syncNow;
        lock (sync)
        {
            ledger.WriteHeadMarker();
            regions.Clear();
            rewrites.Clear();
            foreach (var block in blocks)
            {
                if (block.Flushed < block.End)
                {
                    regions.Add((block, block.Cache!, (int)block.Flushed, (int)block.End));
                }
            }

            ledger.TakeRewrites(rewrites);
            taken = appendsSinceRound;
            appendsSinceRound = 0;
            roundLast = ledger.Last;
            roundWaiters = waiters;
            waiters = null;
            commitScheduled = false;
            directorySync = blocks.TakeNewFiles();
            syncNow = SyncEveryRound || force || forceSyncWanted || withCheckpoint || closing;
            forceSyncWanted = false;
            reserve = reservation.NextFor(ledger.Last, closing);

            var now = Environment.TickCount64;
            if (withCheckpoint || checkpoints.IsDue(now))
            {
                snapshot = checkpoints.Take(now);
                buried = blocks.TakeBuried();
            }
        }

        try
        {
            touched.Clear();
            foreach (var (block, cache, from, to) in regions)
            {
                var file = block.File ??= OpenForWrite(block);
                var end = BlockFileHeader.Size + (long)to;
                if (end > block.Allocated)
                {
                    // Reserve ahead in 1 MiB steps (up to the block size): syncs inside reserved space journal nothing.
                    var target = Math.Max(end, Math.Min(BlockFileHeader.Size + Math.Max(blocks.BlockSize, to), (end + (1 << 20) - 1) & ~((1L << 20) - 1)));
                    file.Preallocate(target);
                    block.Allocated = Math.Max(target, end);
                }

                file.Write(cache.AsSpan(from, to - from), BlockFileHeader.Size + from);
                touched.Add(block);
            }

            foreach (var (block, offset, data) in rewrites)
            {
                var file = block.File ??= fs.Open(block.Path, create: false);
                if (block.Compressed)
                {
                    byte[]? records = null;
                    lock (sync)
                    {
                        if (block.Cache is not null && blocks.Contains(block))
                        {
                            records = block.Cache.AsSpan(0, (int)block.End).ToArray();
                        }
                    }

                    if (records is null)
                    {
                        // Removed meanwhile: its file goes with the next checkpoint.
                        continue;
                    }

                    BlockReader.WriteCompressed(fs, block, records);
                    block.CloseFile();
                    continue;
                }

                file.Write(data, BlockFileHeader.Size + offset);
                if (!touched.Contains(block))
                {
                    touched.Add(block);
                }
            }

            if (syncNow)
            {
                lock (sync)
                {
                    foreach (var block in blocks)
                    {
                        if (block.Synced < block.Flushed && !touched.Contains(block))
                        {
                            touched.Add(block);
                        }
                    }
                }

                var syncStart = Stopwatch.GetTimestamp();
                foreach (var block in touched)
                {
                    block.File?.Sync();
                }

                Volatile.Write(ref lastSyncDuration, Stopwatch.GetTimestamp() - syncStart);

                lastSyncTicks = Environment.TickCount64;
            }

            if (directorySync)
            {
                fs.SyncDirectory(blocksDirectory);
            }

            if (reserve != 0)
            {
                Reserve(reserve);
            }

            if (snapshot is not null)
            {
                checkpoints.Write(snapshot);
                foreach (var block in buried)
                {
                    block.CloseFile();
                    if (fs.FileExists(block.Path))
                    {
                        fs.DeleteFile(block.Path);
                    }
                }

                if (buried.Length > 0)
                {
                    fs.SyncDirectory(blocksDirectory);
                }
            }
        }
        catch (Exception ex) when (ex is IOException or UnauthorizedAccessException or InvalidOperationException)
        {
            Fail(ex);
            roundWaiters?.TrySetException(new IOException($"stream {name}: write to disk failed", ex));
            return;
        }

        lock (sync)
        {
            foreach (var (block, _, from, to) in regions)
            {
                block.Flushed = Math.Max(block.Flushed, to);
                if (syncNow)
                {
                    block.Synced = Math.Max(block.Synced, to);
                }
            }

            if (syncNow)
            {
                foreach (var block in touched)
                {
                    block.Synced = Math.Max(block.Synced, block.Flushed);
                }
            }

            blocks.Buried(buried);
            if (roundLast > durable && (syncNow || !SyncEveryRound))
            {
                Volatile.Write(ref durable, roundLast);
            }

            if (blocks.TrimWanted)
            {
                blocks.TrimSealedCaches();
            }

            if (!closed)
            {
                blocks.PrepareSpare();
            }

            blocks.ReturnRetired();

            // The publishes acknowledged by this round will be followed by as many new ones: the next round waits
            // briefly for them (WaitForRefill) on top of those that arrived during this one.
            Volatile.Write(ref refillTarget, roundWaiters is not null && SyncEveryRound && !closing ? appendsSinceRound + taken : 0);
            Monitor.PulseAll(sync);
        }

        roundWaiters?.TrySetResult();
    }

    /// <summary>
    /// Opens a block file for the committer's write, creating it with its header on the block's first write (the
    /// round's directory fsync then makes the new entry durable). Caller holds <c>ioSync</c>.
    /// </summary>
    private IStorageFile OpenForWrite(MessageBlock block)
    {
        if (block.Created)
        {
            return fs.Open(block.Path, create: false);
        }

        var file = fs.Open(block.Path, create: true);
        Span<byte> header = stackalloc byte[BlockFileHeader.Size];
        BlockFileHeader.Write(header, block.Flags, block.Salt);
        file.SetLength(0);
        file.Write(header, 0);
        block.Created = true;
        return file;
    }
}
