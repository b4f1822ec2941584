using System.Runtime.ExceptionServices;

namespace Broker.Storage.FileStore.Internal.Io;

/// <summary>
/// Syncs of one directory shared by the callers that ask at the same time (a group commit of directory entries): the
/// first caller syncs, callers that come while it syncs wait and share the next sync, which one of them runs. A caller
/// returns only after a sync that started after it asked, so every entry it created or removed before asking is
/// durable. A stream's consumer folders are made and removed this way: ten thousand MQTT QoS 1 consumers created at
/// once shared a few hundred syncs of <c>obs/</c> instead of syncing it once each (issue 25).
/// </summary>
/// <remarks>
/// <see cref="SyncAsync"/> is the same promise for a caller that must not wait (the JetStream API loop deleting
/// consumers one request after the other): its syncs run on the thread pool, one at a time, each covering every caller
/// that asked before it started, so the deletes of a disconnect storm share a few syncs instead of one each (leave4).
/// </remarks>
internal sealed class SharedDirectorySync(IStorageFileSystem fs, string path)
{
    private readonly object gate = new();

    // Requests numbered as they come; a sync covers every request numbered before it started.
    private long requested;
    private long covered;
    private bool syncing;

    // The asynchronous callers waiting for the next sync to start; completed by it, null when none waits.
    private TaskCompletionSource? next;

    /// <summary>The number of syncs run (tests read it).</summary>
    internal long Syncs { get; private set; }

    /// <summary>Callers not yet covered by a completed sync: the one syncing and those waiting (tests read it).</summary>
    internal long Waiting
    {
        get
        {
            lock (gate)
            {
                return requested - covered;
            }
        }
    }

    /// <summary>Returns once a sync of the directory that started after this call has completed.</summary>
    /// <exception cref="IOException">The sync this caller ran failed (callers waiting for it run their own).</exception>
    public void Sync()
    {
        long covers;
        TaskCompletionSource? taken;
        lock (gate)
        {
            var ticket = ++requested;
            while (true)
            {
                if (covered >= ticket)
                {
                    return;
                }

                if (!syncing)
                {
                    break;
                }

                Monitor.Wait(gate);
            }

            (covers, taken) = BeginLocked();
        }

        Run(covers, taken, rethrow: true);
    }

    /// <summary>
    /// Completes once a sync of the directory that started after this call has completed, without syncing or waiting on
    /// the caller's thread; faulted with the <see cref="IOException"/> of a failed sync.
    /// </summary>
    public Task SyncAsync()
    {
        Task task;
        lock (gate)
        {
            requested++;
            next ??= new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
            task = next.Task;
            if (syncing)
            {
                // The running sync may have started before this entry was made: the one after it covers this caller.
                return task;
            }

            syncing = true;
        }

        ThreadPool.UnsafeQueueUserWorkItem(static shared => shared.RunQueued(), this, preferLocal: false);
        return task;
    }

    // Under the gate: this caller syncs now, for every request so far and the asynchronous callers waiting.
    private (long Covers, TaskCompletionSource? Taken) BeginLocked()
    {
        syncing = true;
        var taken = next;
        next = null;
        return (requested, taken);
    }

    private void RunQueued()
    {
        long covers;
        TaskCompletionSource? taken;
        lock (gate)
        {
            (covers, taken) = BeginLocked();
        }

        Run(covers, taken, rethrow: false);
    }

    private void Run(long covers, TaskCompletionSource? taken, bool rethrow)
    {
        Exception? failure = null;
        try
        {
            fs.SyncDirectory(path);
        }
#pragma warning disable CA1031 // Handed to every caller of this sync: a sync left marked running would hang the next ones.
        catch (Exception ex)
#pragma warning restore CA1031
        {
            failure = ex;
        }

        var queue = false;
        lock (gate)
        {
            syncing = false;
            if (failure is null)
            {
                covered = Math.Max(covered, covers);
                Syncs++;
            }

            if (next is not null)
            {
                // Asynchronous callers came during this sync: the next one is theirs (and covers the waiting threads too).
                syncing = true;
                queue = true;
            }

            Monitor.PulseAll(gate);
        }

        if (queue)
        {
            ThreadPool.UnsafeQueueUserWorkItem(static shared => shared.RunQueued(), this, preferLocal: false);
        }

        if (failure is null)
        {
            taken?.SetResult();
        }
        else
        {
            taken?.SetException(failure);
            if (rethrow)
            {
                ExceptionDispatchInfo.Throw(failure);
            }
        }
    }
}
