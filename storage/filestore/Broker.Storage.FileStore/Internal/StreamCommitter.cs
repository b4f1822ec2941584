using System.Diagnostics;
using Broker.Storage.FileStore.Internal.Io;
using Microsoft.Extensions.Logging;

namespace Broker.Storage.FileStore.Internal;

/// <summary>
/// Durability by group commit. Appends only copy into the tail block's cache and schedule a round; one background
/// loop per stream runs rounds back to back: take every byte appended since the last round (under the state lock),
/// write it (outside it), fdatasync each file written, fsync the directory when a block file was created, then
/// complete every wait registered before the round took its bytes. Publishes arriving while a sync runs share the
/// next one. Under <see cref="FileStoreOptions.SyncInterval"/> an append writes its own record when it can
/// (<c>.Tail.cs</c>), a round completes its waits after the write, and the data is fsynced on the interval (and by
/// <see cref="FlushAsync"/>). Owns the durable sequence, the waits for it,
/// the store's open/closed/failed state, and <c>ioSync</c>, the lock that makes file writes other than appends into
/// the tail cache one at a time (its rounds, and the store's erase, compaction, purge, truncate and close).
/// </summary>
/// <remarks>
/// Locks: <c>ioSync</c> (outer, created here; the store and its maintenance take the same object) before the stream
/// store's state lock <c>sync</c> (inner, passed in). Appends take only <c>sync</c>, so a publish never waits for a
/// disk write.
/// </remarks>
[System.Diagnostics.CodeAnalysis.SuppressMessage("Design", "CA1001", Justification = "The semaphore only wakes the loop (awaited, never waited on synchronously, so it has no wait handle to free) and outlives it: a round scheduled after the stop must not throw.")]
internal sealed partial class StreamCommitter
{
    // Rounds that start at once after a refill wait ran out (committer thread only).
    private const int RefillSkipsAfterMiss = 16;

    private readonly object ioSync = new();
    private readonly object sync;
    private readonly IStorageFileSystem fs;
    private readonly string blocksDirectory;
    private readonly BlockSet blocks;
    private readonly StreamLedger ledger;
    private readonly SequenceReservation reservation;
    private readonly StreamCheckpoint checkpoints;
    private readonly TimeSpan? syncInterval;
    private readonly ILogger logger;
    private readonly string name;
    private readonly SemaphoreSlim signal = new(0, int.MaxValue);

    private Task? loop;
    private volatile bool stopping;
    private bool closed;
    private Exception? failure;
    private bool commitScheduled;
    private bool forceSyncWanted;
    private ulong durable;
    private TaskCompletionSource? waiters;
    private long appendsSinceRound;
    private long refillTarget;
    private long lastSyncDuration;
    private long lastSyncTicks = Environment.TickCount64;
    private int refillSkips;

    public StreamCommitter(
        object sync,
        IStorageFileSystem fs,
        string blocksDirectory,
        BlockSet blocks,
        StreamLedger ledger,
        SequenceReservation reservation,
        StreamCheckpoint checkpoints,
        TimeSpan? syncInterval,
        ILogger logger,
        string name)
    {
        this.sync = sync;
        this.fs = fs;
        this.blocksDirectory = blocksDirectory;
        this.blocks = blocks;
        this.ledger = ledger;
        this.reservation = reservation;
        this.checkpoints = checkpoints;
        this.syncInterval = syncInterval;
        this.logger = logger;
        this.name = name;
    }

    /// <summary>The I/O lock (outer to the state lock), for the store's structural changes and its maintenance.</summary>
    public object IoSync => ioSync;

    /// <summary>The highest sequence whose record is durable (or written, under a sync interval).</summary>
    public ulong DurableSequence => Volatile.Read(ref durable);

    /// <summary>The store is closing or closed. Read under the state lock.</summary>
    public bool Closed => closed;

    /// <summary>The medium failed: the store refuses writes. Read under the state lock.</summary>
    public bool Failed => failure is not null;

    private bool SyncEveryRound => syncInterval is null;

    public void Start() => loop = Task.Run(RunAsync);

    /// <summary>Recovery ended at <paramref name="last"/>: everything up to it is on disk.</summary>
    public void Recovered(ulong last) => durable = last;

    /// <summary>Marks the store closed and wakes appends waiting for a reservation; false when it already was.</summary>
    public bool BeginClose()
    {
        lock (sync)
        {
            if (closed)
            {
                return false;
            }

            closed = true;
            Monitor.PulseAll(sync);
            return true;
        }
    }

    /// <summary>Tells the loop to stop after its current round (before the maintenance timer is disposed).</summary>
    public void RequestStop() => stopping = true;

    public async Task StopAsync()
    {
        stopping = true;
        signal.Release();
        if (loop is not null)
        {
            await loop.ConfigureAwait(false);
        }
    }

    /// <summary>
    /// The last round of a clean stop (the loop has stopped): everything fsynced, a checkpoint, the exact last sequence
    /// reserved, the tail file cut to its records; then every block closed.
    /// </summary>
    public void CommitFinal()
    {
        lock (ioSync)
        {
            try
            {
                if (failure is null)
                {
                    CommitRound(force: true, withCheckpoint: true, closing: true);
                    blocks.TrimTailFile();
                }
            }
            catch (IOException ex)
            {
                FileStoreLog.WriteFailed(logger, name, ex);
            }

            lock (sync)
            {
                blocks.CloseAll();
            }
        }
    }

    public ValueTask WaitForDurableAsync(ulong sequence, CancellationToken cancellationToken)
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
                return ValueTask.FromException(new IOException($"stream {name}: the store failed", failure));
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

    public ValueTask FlushAsync(CancellationToken cancellationToken)
    {
        Task task;
        lock (sync)
        {
            if (failure is not null)
            {
                return ValueTask.FromException(new IOException($"stream {name}: the store failed", failure));
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

    /// <summary>
    /// An append was made: counted for the next round's refill wait, and a round scheduled; under a sync interval,
    /// when the tail block's file can take the new records as they are, no round is woken for them and the caller
    /// writes them itself after releasing <c>sync</c> (<see cref="WriteTail"/>, true). Caller holds <c>sync</c>.
    /// </summary>
    public bool Appended()
    {
        appendsSinceRound++;
        if (SyncEveryRound || !TailWritable())
        {
            ScheduleCommit();
            return false;
        }

        if (RoundOwed())
        {
            ScheduleCommit();
        }

        return true;
    }

    /// <summary>Wakes the committer once per round. Caller holds <c>sync</c>.</summary>
    public void ScheduleCommit()
    {
        if (!commitScheduled)
        {
            commitScheduled = true;
            signal.Release();
        }
    }

    /// <summary>Under a sync interval, asks the next round to fsync once the interval has passed. Caller holds <c>sync</c>.</summary>
    public void RequestIntervalSync(long now)
    {
        if (syncInterval is { } interval && now - lastSyncTicks >= (long)interval.TotalMilliseconds)
        {
            forceSyncWanted = true;
            ScheduleCommit();
        }
    }

    /// <summary>
    /// Waits (releasing the lock) until <paramref name="sequence"/> is inside the durable reservation. Only a disk far
    /// slower than the publish rate makes an append wait here. Caller holds <c>sync</c>.
    /// </summary>
    public bool AwaitReservation(ulong sequence)
    {
        while (sequence > reservation.Reserved)
        {
            if (closed || failure is not null)
            {
                return false;
            }

            ScheduleCommit();
            Monitor.Wait(sync, 100);
        }

        return true;
    }

    /// <summary>Writes and fsyncs a new reservation, then lets appends up to it go on. Caller holds <c>ioSync</c> (or is the only thread).</summary>
    public void Reserve(ulong value)
    {
        reservation.Write(value);
        lock (sync)
        {
            reservation.Reserved = value;
            Monitor.PulseAll(sync);
        }
    }

    /// <summary>The medium failed: refuse further writes (retrying an fsync after a failure can silently lose data).</summary>
    public void Fail(Exception ex)
    {
        lock (sync)
        {
            failure ??= ex;
            Monitor.PulseAll(sync);
        }

        FileStoreLog.WriteFailed(logger, name, ex);
        FailWaiters(new IOException($"stream {name}: write to disk failed", ex));
    }

    public void FailWaiters(Exception ex)
    {
        TaskCompletionSource? pending;
        lock (sync)
        {
            pending = waiters;
            waiters = null;
        }

        pending?.TrySetException(ex);
    }

    private bool HasUnsyncedChanges() => ledger.HeadDirty || ledger.PendingRewrites > 0 || blocks.NewFiles || blocks.HasUnsyncedBytes();

    /// <summary>The task of the next round; it covers everything appended before this call. Caller holds <c>sync</c>.</summary>
    private Task RegisterWaiter()
    {
        waiters ??= new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        ScheduleCommit();
        return waiters.Task;
    }

    private async Task RunAsync()
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

                CommitRound(force: false, withCheckpoint: false, closing: false);
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
}
