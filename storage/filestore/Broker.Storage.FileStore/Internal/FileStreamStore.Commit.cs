using System.Diagnostics;
using Broker.Storage.FileStore.Internal.Format;
using Broker.Storage.FileStore.Internal.Io;

namespace Broker.Storage.FileStore.Internal;

/// <summary>
/// Durability by group commit. Appends only copy into the tail block's cache and schedule a round; one background
/// loop per stream runs rounds back to back: take every byte appended since the last round (under the lock), write it
/// (outside the lock), fdatasync each file written, fsync the directory when a block file was created, then complete
/// every wait registered before the round took its bytes. Publishes arriving while a sync runs share the next one.
/// Under <see cref="FileStoreOptions.SyncInterval"/> a round completes its waits after the write, and the data is
/// fsynced on the interval (and by <see cref="FlushAsync"/>).
/// </summary>
internal sealed partial class FileStreamStore
{
    private readonly List<byte[]> retired = [];
    private readonly List<(MessageBlock Block, uint Offset, int Length)> pendingRewrites = [];
    private readonly List<MessageBlock> graveyard = [];
    private readonly List<(MessageBlock Block, byte[] Cache, int From, int To)> regions = [];
    private readonly List<(MessageBlock Block, long Offset, byte[] Bytes)> rewrites = [];
    private readonly List<MessageBlock> touched = [];
    private readonly SemaphoreSlim signal = new(0, int.MaxValue);

    private bool commitScheduled;
    private bool headDirty;
    private bool newFiles;
    private bool checkpointWanted;
    private bool forceSyncWanted;
    private bool subjectsSuspect;
    private ulong durable;
    private TaskCompletionSource? waiters;
    private long appendsSinceRound;
    private long refillTarget;
    private long lastSyncDuration;
    private long lastCheckpointTicks = Environment.TickCount64;
    private long lastSyncTicks = Environment.TickCount64;

    public ulong DurableSequence => Volatile.Read(ref durable);

    public ValueTask WaitForDurableAsync(ulong sequence, CancellationToken cancellationToken = default)
    {
        if (sequence <= Volatile.Read(ref durable))
        {
            return default;
        }

        Task task;
        lock (sync)
        {
            if (failure is not null)
            {
                return ValueTask.FromException(new IOException($"stream {config.Name}: the store failed", failure));
            }

            if (sequence <= durable)
            {
                return default;
            }

            if (closed)
            {
                return ValueTask.FromException(new ObjectDisposedException(nameof(FileStreamStore), "store is closed"));
            }

            task = RegisterWaiter();
        }

        return cancellationToken.CanBeCanceled ? new ValueTask(task.WaitAsync(cancellationToken)) : new ValueTask(task);
    }

    public ValueTask FlushAsync(CancellationToken cancellationToken = default)
    {
        Task task;
        lock (sync)
        {
            if (failure is not null)
            {
                return ValueTask.FromException(new IOException($"stream {config.Name}: the store failed", failure));
            }

            if (closed)
            {
                return default;
            }

            if (!HasUnsyncedChanges())
            {
                return default;
            }

            forceSyncWanted = true;
            task = RegisterWaiter();
        }

        return cancellationToken.CanBeCanceled ? new ValueTask(task.WaitAsync(cancellationToken)) : new ValueTask(task);
    }

    private bool HasUnsyncedChanges()
    {
        if (headDirty || pendingRewrites.Count > 0 || newFiles)
        {
            return true;
        }

        foreach (var block in blocks)
        {
            if (block.Synced < block.End)
            {
                return true;
            }
        }

        return false;
    }

    /// <summary>The task of the next round; it covers everything appended before this call. Caller holds <c>sync</c>.</summary>
    private Task RegisterWaiter()
    {
        waiters ??= new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        ScheduleCommit();
        return waiters.Task;
    }

    /// <summary>Wakes the committer once per round. Caller holds <c>sync</c>.</summary>
    private void ScheduleCommit()
    {
        if (!commitScheduled)
        {
            commitScheduled = true;
            signal.Release();
        }
    }

    private bool SyncEveryRound => options.SyncInterval is null;

    /// <summary>
    /// One round. Caller holds <c>ioSync</c>. <paramref name="force"/> fsyncs even under a sync interval;
    /// <paramref name="checkpoint"/> writes <c>index.db</c> after the data it describes is durable; <paramref name="closing"/>
    /// also sets the sequence reservation to the exact last sequence (a clean stop: no jump on the next start).
    /// </summary>
    private void CommitRound(bool force, bool checkpoint, bool closing)
    {
        ulong roundLast;
        long taken;
        TaskCompletionSource? roundWaiters;
        bool directorySync;
        ulong reservation = 0;
        byte[]? snapshot = null;
        MessageBlock[] buried = [];
        bool syncNow;
        lock (sync)
        {
            if (headDirty && last > 0)
            {
                AppendMarker(ReserveTail(RecordFormat.Overhead), first, RecordKind.Head);
            }

            headDirty = false;
            regions.Clear();
            rewrites.Clear();
            foreach (var block in blocks)
            {
                if (block.Flushed < block.End)
                {
                    regions.Add((block, block.Cache!, (int)block.Flushed, (int)block.End));
                }
            }

            foreach (var (block, offset, length) in pendingRewrites)
            {
                if (block.Cache is not null && blocks.Contains(block) && offset + length <= block.Flushed)
                {
                    rewrites.Add((block, offset, block.Cache.AsSpan((int)offset, length).ToArray()));
                }
            }

            pendingRewrites.Clear();
            taken = appendsSinceRound;
            appendsSinceRound = 0;
            roundLast = last;
            roundWaiters = waiters;
            waiters = null;
            commitScheduled = false;
            directorySync = newFiles;
            newFiles = false;
            syncNow = SyncEveryRound || force || forceSyncWanted || checkpoint || closing;
            forceSyncWanted = false;
            if (closing)
            {
                reservation = last;
            }
            else if (last + (ReservationStep / 2) > reserved)
            {
                reservation = last + ReservationStep;
            }

            var now = Environment.TickCount64;
            if (checkpoint || (checkpointWanted && now - lastCheckpointTicks >= 1000))
            {
                snapshot = BuildCheckpoint();
                buried = [.. graveyard];
                checkpointWanted = false;
                lastCheckpointTicks = now;
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
                    var target = Math.Max(end, Math.Min(BlockFileHeader.Size + Math.Max(blockSize, to), (end + (1 << 20) - 1) & ~((1L << 20) - 1)));
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

            if (reservation != 0)
            {
                WriteReservation(reservation);
            }

            if (snapshot is not null)
            {
                AtomicFile.Write(fs, CheckpointPath, snapshot);
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
            roundWaiters?.TrySetException(new IOException($"stream {config.Name}: write to disk failed", ex));
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

            foreach (var block in buried)
            {
                graveyard.Remove(block);
                block.ReleaseCache();
                block.Cipher?.Dispose();
            }

            if (roundLast > durable && (syncNow || !SyncEveryRound))
            {
                Volatile.Write(ref durable, roundLast);
            }

            if (trimWanted)
            {
                TrimSealedCaches();
            }

            PrepareSpareBlock();
            ReturnRetired();

            // The publishes acknowledged by this round will be followed by as many new ones: the next round waits
            // briefly for them (WaitForRefill) on top of those that arrived during this one.
            Volatile.Write(ref refillTarget, roundWaiters is not null && SyncEveryRound && !closing ? appendsSinceRound + taken : 0);
            Monitor.PulseAll(sync);
        }

        roundWaiters?.TrySetResult();
    }

    /// <summary>Returns replaced cache arrays to the free list; no round holds them any more. Caller holds <c>sync</c>.</summary>
    private void ReturnRetired()
    {
        foreach (var array in retired)
        {
            buffers.ReturnCache(array);
        }

        retired.Clear();
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

    /// <summary>
    /// A block wholly removed: its file goes once a checkpoint that no longer lists it is durable. Its bitmap and, when
    /// no commit round holds its bytes, its cache go back to the free lists now.
    /// </summary>
    private void Retire(MessageBlock block)
    {
        if (block == tail)
        {
            tail = null;
        }

        block.ReleaseBits();
        if (block.Flushed == block.End)
        {
            block.ReleaseCache();
        }

        graveyard.Add(block);
        checkpointWanted = true;
    }

    /// <summary>The medium failed: refuse further writes (retrying an fsync after a failure can silently lose data).</summary>
    private void Fail(Exception ex)
    {
        lock (sync)
        {
            failure ??= ex;
            Monitor.PulseAll(sync);
        }

        FileStoreLog.WriteFailed(logger, config.Name, ex);
        FailWaiters(new IOException($"stream {config.Name}: write to disk failed", ex));
    }

    private void FailWaiters(Exception ex)
    {
        TaskCompletionSource? pending;
        lock (sync)
        {
            pending = waiters;
            waiters = null;
        }

        pending?.TrySetException(ex);
    }
}
