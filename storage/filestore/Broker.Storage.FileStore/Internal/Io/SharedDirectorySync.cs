namespace Broker.Storage.FileStore.Internal.Io;

/// <summary>
/// Syncs of one directory shared by the callers that ask at the same time (a group commit of directory entries): the
/// first caller syncs, callers that come while it syncs wait and share the next sync, which one of them runs. A caller
/// returns only after a sync that started after it asked, so every entry it created or removed before asking is
/// durable. A stream's consumer folders are made and removed this way: ten thousand MQTT QoS 1 consumers created at
/// once shared a few hundred syncs of <c>obs/</c> instead of syncing it once each (issue 25).
/// </summary>
internal sealed class SharedDirectorySync(IStorageFileSystem fs, string path)
{
    private readonly object gate = new();

    // Requests numbered as they come; a sync covers every request numbered before it started.
    private long requested;
    private long covered;
    private bool syncing;

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

            syncing = true;
            covers = requested;
        }

        var synced = false;
        try
        {
            fs.SyncDirectory(path);
            synced = true;
        }
        finally
        {
            lock (gate)
            {
                syncing = false;
                if (synced)
                {
                    covered = Math.Max(covered, covers);
                    Syncs++;
                }

                Monitor.PulseAll(gate);
            }
        }
    }
}
