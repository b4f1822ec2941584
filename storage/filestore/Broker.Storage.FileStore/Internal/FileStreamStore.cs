using System.Diagnostics;
using System.Security.Cryptography;
using Broker.Abstractions;
using Broker.Storage.FileStore.Internal.Crypto;
using Broker.Storage.FileStore.Internal.Io;
using Microsoft.Extensions.Logging;

namespace Broker.Storage.FileStore.Internal;

/// <summary>
/// The file store of one stream. Layout under the stream's directory (nats-server's, see <c>docs/durability.md</c>):
/// <c>meta.inf</c>, <c>msgs/&lt;id&gt;.blk</c> message blocks, <c>msgs/index.db</c> the checkpoint of the stream state,
/// <c>msgs/seq.db</c> the sequence reservation, <c>obs/&lt;consumer&gt;/</c> consumer state. It implements the storage
/// contract over collaborators it creates and wires: the <see cref="BlockSet"/> (the blocks, the tail, their caches),
/// the <see cref="SubjectCounters"/>, the <see cref="StreamLedger"/> (the stream's counters, appends, removals and
/// limits), the <see cref="StreamCommitter"/> (group commit, the durable sequence, <see cref="SequenceReservation"/>
/// and <see cref="StreamCheckpoint"/> writes), the <see cref="StoreMaintenance"/> timer and, on open, the
/// <see cref="StreamRecovery"/>.
/// </summary>
/// <remarks>
/// Locks: <c>ioSync</c> (outer, the committer's) serialises file writes other than appends into the tail cache: the
/// committer's write and sync round, erase, compaction, purge, truncate; <c>sync</c> (inner, created here and given to
/// the collaborators that take it) guards all in-memory state. Appends (<c>Store</c>) take only <c>sync</c>, so
/// a publish never waits for a disk write.
/// </remarks>
internal sealed partial class FileStreamStore : IStreamStore
{
    internal const string BlocksFolder = "msgs";
    internal const string ConsumersFolder = "obs";

    private readonly object sync = new();
    private readonly object ioSync;
    private readonly IStorageFileSystem fs;
    private readonly string directory;
    private readonly string blocksDirectory;
    private readonly StreamKey? key;
    private readonly byte[]? keySalt;
    private readonly StreamConsumers consumers;
    private readonly BlockSet blocks;
    private readonly SubjectCounters subjects;
    private readonly StreamLedger ledger;
    private readonly SequenceReservation reservation;
    private readonly StreamCheckpoint checkpoints;
    private readonly StreamCommitter committer;
    private readonly StoreMaintenance maintenance;
    private readonly SubjectExpiryReports subjectExpiries;

    private StreamStoreConfig config;
    private StorageUpdateHandler? updates;

    private FileStreamStore(IStorageFileSystem fs, FileStoreOptions options, ILogger logger, StreamStoreConfig config, StreamKey? key, byte[]? keySalt)
    {
        this.fs = fs;
        this.config = config;
        this.key = key;
        this.keySalt = keySalt;
        directory = config.Directory ?? throw new InvalidOperationException("the file store needs a store directory (store_dir)");
        blocksDirectory = Path.Combine(directory, BlocksFolder);

        var codec = new RecordCodec();
        blocks = new BlockSet(fs, blocksDirectory, BlockSet.ChooseSize(options, config, key is not null), key, codec);
        subjects = new SubjectCounters(blocks);
        ledger = new StreamLedger(blocks, subjects, codec, logger, config.Name);
        blocks.MessageLost = ledger.LoseMessage;
        reservation = new SequenceReservation(fs, blocksDirectory);
        checkpoints = new StreamCheckpoint(fs, blocksDirectory, key, blocks, subjects, ledger);
        committer = new StreamCommitter(sync, fs, blocksDirectory, blocks, ledger, reservation, checkpoints, options.SyncInterval, logger, config.Name);
        ioSync = committer.IoSync;
        subjectExpiries = new SubjectExpiryReports(sync, ledger, (sequence, message) => blocks.Find(sequence) is { } block && LoadLive(block, sequence, message), RemoveExpiredLeft);
        consumers = new StreamConsumers(sync, committer, fs, options, logger, directory, key);
        maintenance = new StoreMaintenance(sync, fs, blocksDirectory, options, () => this.config, blocks, ledger, subjects, checkpoints, committer, AfterTick);
    }

    public StreamStoreConfig Config
    {
        get
        {
            lock (sync)
            {
                return config;
            }
        }
    }

    /// <summary>Messages found corrupt or missing on disk since the store opened (nats-server's <c>lost</c>).</summary>
    public ulong LostMessages
    {
        get
        {
            lock (sync)
            {
                return ledger.Lost;
            }
        }
    }

    public ulong DurableSequence => committer.DurableSequence;

    internal string Directory => directory;

    internal int BlockCount
    {
        get
        {
            lock (sync)
            {
                return blocks.Count;
            }
        }
    }

    /// <summary>Sealed blocks whose records are in memory (bounded by <see cref="BlockSet.MaxCachedSealedBlocks"/> once durable).</summary>
    internal int CachedSealedBlocks
    {
        get
        {
            lock (sync)
            {
                return blocks.CachedSealedBlocks;
            }
        }
    }

    /// <summary>Whether the tail block's records are in memory (a clean restart leaves them on disk until first needed).</summary>
    internal bool TailInMemory
    {
        get
        {
            lock (sync)
            {
                return blocks.Tail?.Cache is not null;
            }
        }
    }

    /// <summary>Full-size caches in the store's free list.</summary>
    internal int FreeCaches
    {
        get
        {
            lock (sync)
            {
                return blocks.Buffers.FreeCaches;
            }
        }
    }

    /// <summary>Creates the store of a new stream: the directories and <c>meta.inf</c>, all durable before it returns.</summary>
    public static FileStreamStore Create(IStorageFileSystem fs, FileStoreOptions options, ILogger logger, StreamStoreConfig config)
    {
        var directory = config.Directory ?? throw new InvalidOperationException("the file store needs a store directory (store_dir)");
        if (fs.FileExists(Path.Combine(directory, StreamMetaFile.FileName)))
        {
            throw new InvalidOperationException($"stream directory {directory} already holds a stream");
        }

        byte[]? salt = null;
        StreamKey? key = null;
        if (options.Cipher != FileStoreCipher.None)
        {
            salt = RandomNumberGenerator.GetBytes(16);
            key = StreamKey.Derive(options.Cipher, options.Key!, salt);
        }

        DurableDirectory.Create(fs, Path.Combine(directory, BlocksFolder));
        DurableDirectory.Create(fs, Path.Combine(directory, ConsumersFolder));
        StreamMetaFile.Write(fs, directory, config, salt, key);
        var store = new FileStreamStore(fs, options, logger, config, key, salt);
        store.committer.Reserve(SequenceReservation.Step);
        store.StartBackground();
        return store;
    }

    /// <summary>Opens the stream in <paramref name="directory"/>; <see langword="null"/> when it holds no stream of ours.</summary>
    public static FileStreamStore? Open(IStorageFileSystem fs, FileStoreOptions options, ILogger logger, string directory)
    {
        var meta = StreamMetaFile.Read(fs, directory, options);
        if (meta is null)
        {
            return null;
        }

        var (config, salt, key) = meta.Value;
        var store = new FileStreamStore(fs, options, logger, config, key, salt);
        var watch = Stopwatch.StartNew();
        new StreamRecovery(fs, store.blocksDirectory, key, store.blocks, store.ledger, store.subjects, store.checkpoints, store.reservation, store.committer, logger, config.Name).Run();
        var ledger = store.ledger;
        FileStoreLog.Recovered(logger, config.Name, ledger.Messages, ledger.First, ledger.Last, ledger.Lost, watch.Elapsed.TotalMilliseconds);
        store.consumers.Recover();
        store.StartBackground();
        return store;
    }

    public ValueTask WaitForDurableAsync(ulong sequence, CancellationToken cancellationToken = default) => committer.WaitForDurableAsync(sequence, cancellationToken);

    public ValueTask FlushAsync(CancellationToken cancellationToken = default) => committer.FlushAsync(cancellationToken);

    public void UpdateConfig(StreamStoreConfig config)
    {
        ArgumentNullException.ThrowIfNull(config);
        lock (ioSync)
        {
            lock (sync)
            {
                ThrowIfUnusable();
                this.config = config with { Directory = directory };
                StreamMetaFile.Write(fs, directory, this.config, keySalt, key);

                // Lower per-subject limits apply at once, as nats-server's enforcePerSubjectLimit on update.
                ledger.EnforceSubjectLimits(config);
                ledger.EnforceStreamLimits(this.config);
                ledger.ExpireByAge(this.config);
                committer.ScheduleCommit();
            }
        }

        DrainRemovalEvents();
    }

    public void RegisterSubjectExpiries(SubjectExpiredHandler? handler) => subjectExpiries.Register(handler);

    /// <summary>After a maintenance tick, outside the locks: the removals, then the subjects expiries emptied.</summary>
    private void AfterTick()
    {
        DrainRemovalEvents();
        subjectExpiries.Drain();
    }

    /// <summary>Removes the expired messages kept for delete markers that the engine's markers did not roll up. Outside the locks.</summary>
    private void RemoveExpiredLeft(ulong[] sequences)
    {
        lock (sync)
        {
            if (committer.Closed || committer.Failed)
            {
                return;
            }

            var removed = false;
            foreach (var sequence in sequences)
            {
                removed |= ledger.RemoveLive(sequence, RemovalReason.Limit);
            }

            if (removed)
            {
                committer.ScheduleCommit();
            }
        }

        DrainRemovalEvents();
    }

    public void RegisterStorageUpdates(StorageUpdateHandler? handler)
    {
        lock (sync)
        {
            updates = handler;
            ledger.ReportRemovals = handler is not null;
        }
    }

    public IConsumerStore OpenConsumerStore(ConsumerStoreConfig config)
    {
        ArgumentNullException.ThrowIfNull(config);
        return consumers.Open(config);
    }

    public IReadOnlyList<IConsumerStore> ConsumerStores => consumers.Snapshot();

    public async ValueTask DisposeAsync()
    {
        if (!committer.BeginClose())
        {
            return;
        }

        await StopBackgroundAsync().ConfigureAwait(false);
        await consumers.CloseAllAsync().ConfigureAwait(false);

        committer.CommitFinal();
    }

    public async ValueTask DeleteAsync(CancellationToken cancellationToken = default)
    {
        if (!committer.BeginClose())
        {
            return;
        }

        await StopBackgroundAsync().ConfigureAwait(false);
        await consumers.CloseAllAsync().ConfigureAwait(false);

        lock (ioSync)
        {
            lock (sync)
            {
                blocks.CloseAll();
                blocks.Clear();
            }

            StreamMetaFile.DeleteStream(fs, directory);
        }

        committer.FailWaiters(new ObjectDisposedException(nameof(FileStreamStore), "stream deleted"));
    }

    private void StartBackground()
    {
        committer.Start();
        maintenance.Start();
    }

    private async Task StopBackgroundAsync()
    {
        committer.RequestStop();
        await maintenance.StopAsync().ConfigureAwait(false);
        await committer.StopAsync().ConfigureAwait(false);
    }

    /// <summary>The consumer map's capacity (tests read it).</summary>
    internal int ConsumerCapacity => consumers.Capacity;

    private void ThrowIfUnusable()
    {
        if (committer.Closed)
        {
            throw new ObjectDisposedException(nameof(FileStreamStore), "store is closed");
        }
    }

    /// <summary>Reports this thread's removals (collected under the lock) to the update handler, outside the locks.</summary>
    private void DrainRemovalEvents()
    {
        if (RemovalEvents.Any)
        {
            StorageUpdateHandler? handler;
            lock (sync)
            {
                handler = updates;
            }

            RemovalEvents.Drain(handler);
        }
    }
}
