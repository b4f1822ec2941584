using Broker.Abstractions;
using Broker.Storage.FileStore.Internal.Crypto;
using Broker.Storage.FileStore.Internal.Io;
using Microsoft.Extensions.Logging;

namespace Broker.Storage.FileStore.Internal;

/// <summary>
/// A consumer's persisted state in <c>obs/&lt;name&gt;/</c>: <c>meta.inf</c> (configuration and engine metadata) and two
/// state slots <c>o.dat</c> / <c>o2.dat</c> written alternately, each whole with a counter and a checksum, so a torn
/// write leaves the previous state readable. Changes are group-committed like the stream's appends: a write round on
/// the thread pool encodes the latest state, writes it and fdatasyncs once for every change made meanwhile; under a
/// sync interval it writes at once and syncs on the interval. Consumers marked memory-only keep nothing on disk.
/// </summary>
/// <remarks>
/// An idle consumer holds no task and no open file: a change queues one round (this store is its work item) unless
/// one is queued or running, and a round closes the slot files once the state it wrote is synced, so ten thousand
/// consumers of a store need ten thousand descriptors neither at rest nor while they are created.
/// <para>The store is its own lock (an object of its own was 24 B of every idle consumer, issue 25): it is internal,
/// and nothing else locks on it (the stream store and the engine hold it only as a map value and an IConsumerStore).</para>
/// </remarks>
internal sealed partial class FileConsumerStore : IConsumerStore, IDisposable, IThreadPoolWorkItem
{
    private static readonly string[] SlotFiles = ["o.dat", "o2.dat"];

    private readonly StreamConsumers stream;
    // The consumer's folder under the stream's obs/ (the consumer's name itself when nothing needed escaping): the full
    // path is made when a round or a meta write needs it, not held (about 200 B of each of 10,000 MQTT QoS 1 consumers).
    private readonly string folder;

    // The open slot files (o.dat, o2.dat) while a round needs them: two fields, not an array (39 B of every idle
    // consumer, issue 25). The file system, key, options and logger are the stream store's, read through it.
    private IStorageFile? slot0;
    private IStorageFile? slot1;

    // The configuration until meta.inf holds it durably, then null: the engine reads the Metadata back only when it
    // recovers the consumer (an MQTT QoS 1 consumer's is about 420 B of JSON), and what the store itself uses is in
    // the fields below (the record without Metadata was 56 B of each idle consumer, issue 25). Config rebuilds it,
    // reading the Metadata from disk when metadataOnDisk.
    private ConsumerStoreConfig? config;
    private bool metadataOnDisk;
    private readonly string name;
    private ConsumerAckPolicy ackPolicy;
    private int maxDeliver;
    private bool memoryOnly;
    private bool durable;

    // A new store's folder and meta.inf are not made yet: its first round makes them (a ConsumerCreation, made for
    // that round only: a field holding it would be 8 B of every idle consumer, issue 25).
    private bool creating;
    private ConsumerState state = new();
    private bool hasState;
    private long version;
    private long writtenVersion;
    private long syncedVersion;
    // A round is wanted (set by a change or a flush, cleared as a round takes the state).
    private bool scheduled;

    // A round is queued on the thread pool or running: one at a time, and none while idle.
    private bool running;

    // Which slot files exist durably (bit per slot): a round opens them without creating them or syncing their folder.
    private int slotsCreated;
    private bool forceSync;
    private ulong slotCounter;
    private TaskCompletionSource? waiters;

    // Completed when the running round ends, for a stop that waits for it.
    private TaskCompletionSource? idle;
    private bool started;
    private Timer? syncTimer;
    private bool stopped;
    private Exception? failure;
    private Task? deletion;

    private FileConsumerStore(StreamConsumers stream, string folder, ConsumerStoreConfig config)
    {
        this.stream = stream;
        this.folder = folder;
        name = config.Name;
        Take(config);
    }

    private IStorageFileSystem FileSystem => stream.FileSystem;

    private StreamKey? Key => stream.Key;

    private FileStoreOptions Options => stream.Options;

    private ILogger Logger => stream.Logger;

    /// <summary>The configuration; its Metadata read back from <c>meta.inf</c> when only the file holds it (empty once deleted).</summary>
    public ConsumerStoreConfig Config
    {
        get
        {
            ConsumerStoreConfig current;
            lock (this)
            {
                if (config is not null)
                {
                    return config;
                }

                current = new ConsumerStoreConfig { Name = name, AckPolicy = ackPolicy, MaxDeliver = maxDeliver, MemoryOnly = memoryOnly, Durable = durable };
                if (!metadataOnDisk)
                {
                    return current;
                }
            }

            return current with { Metadata = ConsumerMetaFile.ReadConfig(FileSystem, Directory, Key)?.Metadata ?? default };
        }
    }

    /// <summary>The consumer's name (the stream store's map key), without reading anything back.</summary>
    public string Name => name;

    /// <summary>Whether only meta.inf holds the Metadata now (tests read it).</summary>
    internal bool MetadataOnDisk
    {
        get
        {
            lock (this)
            {
                return metadataOnDisk;
            }
        }
    }

    private string Directory => Path.Combine(stream.Root, folder);

    public bool HasState
    {
        get
        {
            lock (this)
            {
                return hasState;
            }
        }
    }

    private bool Persistent => !memoryOnly;

    /// <summary>
    /// A new store: nothing is on disk when this returns; its first round, queued now, makes the folder and
    /// <c>meta.inf</c> durable (<see cref="FlushAsync"/> completes after it), so a caller answers a create after it.
    /// </summary>
    public static FileConsumerStore Create(StreamConsumers stream, string folder, ConsumerStoreConfig config)
    {
        var store = new FileConsumerStore(stream, folder, config);
        if (store.Persistent)
        {
            lock (store)
            {
                store.creating = true;
                store.Start();
                store.Schedule();
            }
        }

        return store;
    }

    public static FileConsumerStore? Open(StreamConsumers stream, string directory)
    {
        var fs = stream.FileSystem;
        var key = stream.Key;
        var logger = stream.Logger;
        var meta = ConsumerMetaFile.Read(fs, directory, key);

        if (meta is null)
        {
            FileStoreLog.ConsumerUnreadable(logger, directory);
            return null;
        }

        ConsumerStoreConfig config;
        try
        {
            config = ConsumerStateCodec.DecodeConfig(meta);
        }
        catch (InvalidDataException)
        {
            FileStoreLog.ConsumerUnreadable(logger, directory);
            return null;
        }

        var store = new FileConsumerStore(stream, Path.GetFileName(directory), config);
        store.LoadState();
        store.Start();
        return store;
    }

    public void SetStarting(ulong streamSequence)
    {
        lock (this)
        {
            state.ApplyStarting(streamSequence);
            hasState = true;
            Changed();
        }
    }

    public void UpdateDelivered(ulong consumerSequence, ulong streamSequence, ulong deliveryCount, long timestamp)
    {
        lock (this)
        {
            state.ApplyDelivered(ackPolicy, maxDeliver, consumerSequence, streamSequence, deliveryCount, timestamp);
            hasState = true;
            Changed();
        }
    }

    public void UpdateAcks(ulong consumerSequence, ulong streamSequence)
    {
        lock (this)
        {
            if (state.ApplyAck(ackPolicy, consumerSequence, streamSequence))
            {
                Changed();
            }
        }
    }

    public void Update(ConsumerState state)
    {
        ConsumerState.ThrowIfInconsistent(state);

        lock (this)
        {
            this.state = state.Clone();
            hasState = true;
            Changed();
        }
    }

    public ConsumerState GetState()
    {
        lock (this)
        {
            return state.Clone();
        }
    }

    public void UpdateConfig(ConsumerStoreConfig config)
    {
        ArgumentNullException.ThrowIfNull(config);
        lock (this)
        {
            var wasPersistent = Persistent;
            Take(config);
            metadataOnDisk = false;
            if (Persistent && !stopped)
            {
                if (!wasPersistent)
                {
                    DurableDirectory.Create(FileSystem, Directory);
                }

                if (!creating)
                {
                    // Else the creating round writes the latest configuration.
                    WriteMeta();
                }
                if (!started)
                {
                    Start();
                }

                Changed();
            }
        }
    }

    public ValueTask FlushAsync(CancellationToken cancellationToken = default)
    {
        Task task;
        lock (this)
        {
            if (!Persistent || stopped)
            {
                return default;
            }

            if (failure is not null)
            {
                return ValueTask.FromException(new IOException($"consumer {name}: writing its state failed", failure));
            }

            if (syncedVersion >= version && !creating)
            {
                return default;
            }

            forceSync = true;
            task = RegisterWaiter();
        }

        return cancellationToken.CanBeCanceled ? new ValueTask(task.WaitAsync(cancellationToken)) : new ValueTask(task);
    }

    /// <summary>The deletion under way, or null: the stream waits for it before opening a consumer of the same name.</summary>
    public Task? Deletion => Volatile.Read(ref deletion);

    public ValueTask DeleteAsync(CancellationToken cancellationToken = default)
    {
        TaskCompletionSource? mine = null;
        Task task;
        lock (this)
        {
            if (deletion is null)
            {
                mine = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
                Volatile.Write(ref deletion, mine.Task);
            }

            task = deletion!;
        }

        if (mine is not null)
        {
            _ = DeleteOnceAsync(mine);
        }

        return cancellationToken.CanBeCanceled ? new ValueTask(task.WaitAsync(cancellationToken)) : new ValueTask(task);
    }

    // The folder leaves the consumer's name while the store is still in the stream's list, so a consumer of the same
    // name opened meanwhile waits for it instead of being created in a folder this deletion is about to move. It is
    // renamed, not removed, on the caller's thread (the API loop): one entry of obs/ changes and no file's blocks are
    // freed, the sync of obs/ is shared with the deletes that come meanwhile and runs off the caller, and the files go
    // after the delete completes (DeletedConsumerFolders). Removing them here, with a sync of obs/ each, held the API
    // loop 1-13 ms per delete: a 10,000-session MQTT leave queued 10-60 s of deletes behind it (leave4).
    private async Task DeleteOnceAsync(TaskCompletionSource done)
    {
        Exception? error = null;
        try
        {
            await StopAsync(writeFinal: false).ConfigureAwait(false);
            var directory = Directory;
            if (FileSystem.DirectoryExists(directory))
            {
                var renamed = DeletedConsumerFolders.NewId();
                FileSystem.RenameDirectory(directory, stream.Deleted.PathOf(renamed));
                await stream.Folders.SyncAsync().ConfigureAwait(false);
                stream.Deleted.Remove(renamed);
            }
        }
        catch (Exception ex) when (ex is IOException or UnauthorizedAccessException)
        {
            error = ex;
        }

        stream.Forget(this);
        if (error is null)
        {
            done.SetResult();
        }
        else
        {
            done.SetException(error);
        }
    }

    /// <summary>Releases the sync timer (after <see cref="CloseAsync"/> or <see cref="DeleteAsync"/>).</summary>
    public void Dispose()
    {
        syncTimer?.Dispose();
    }

    /// <summary>Stops writing after writing (and syncing) the latest state; a store being deleted is closed once its folder is gone.</summary>
    public async ValueTask CloseAsync()
    {
        await StopAsync(writeFinal: true).ConfigureAwait(false);
        if (Deletion is { } pending)
        {
            // The stream deletes its folder after closing its stores: not while this deletion still removes a part of it.
            try
            {
                await pending.ConfigureAwait(false);
            }
            catch (Exception ex) when (ex is IOException or UnauthorizedAccessException)
            {
                // The deletion's caller has its error.
            }
        }
    }

    private async ValueTask StopAsync(bool writeFinal)
    {
        Task? round = null;
        lock (this)
        {
            if (stopped)
            {
                return;
            }

            stopped = true;
            if (running)
            {
                idle = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
                round = idle.Task;
            }
        }

        if (syncTimer is not null)
        {
            await syncTimer.DisposeAsync().ConfigureAwait(false);
        }

        if (round is not null)
        {
            await round.ConfigureAwait(false);
        }

        if (writeFinal && Persistent && failure is null)
        {
            try
            {
                WriteRound(sync: true);
            }
            catch (IOException ex)
            {
                FileStoreLog.ConsumerWriteFailed(Logger, name, ex);
            }
        }

        CloseSlots();
        TaskCompletionSource? pending;
        lock (this)
        {
            pending = waiters;
            waiters = null;
        }

        pending?.TrySetResult();
    }
}
