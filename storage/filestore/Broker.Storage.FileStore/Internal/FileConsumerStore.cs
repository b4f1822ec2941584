using System.Buffers.Binary;
using System.Text;
using Broker.Abstractions;
using Broker.Storage.FileStore.Internal.Crypto;
using Broker.Storage.FileStore.Internal.Format;
using Broker.Storage.FileStore.Internal.Io;
using Microsoft.Extensions.Logging;

namespace Broker.Storage.FileStore.Internal;

/// <summary>
/// A consumer's persisted state in <c>obs/&lt;name&gt;/</c>: <c>meta.inf</c> (configuration and engine metadata) and two
/// state slots <c>o.dat</c> / <c>o2.dat</c> written alternately, each whole with a counter and a checksum, so a torn
/// write leaves the previous state readable. Changes are group-committed like the stream's appends: a background
/// writer encodes the latest state, writes it and fdatasyncs once for every change made meanwhile; under a sync
/// interval it writes at once and syncs on the interval. Consumers marked memory-only keep nothing on disk.
/// </summary>
internal sealed class FileConsumerStore : IConsumerStore, IDisposable
{
    private const string MetaFile = "meta.inf";
    private static readonly string[] SlotFiles = ["o.dat", "o2.dat"];

    private readonly object sync = new();
    private readonly FileStreamStore stream;
    private readonly IStorageFileSystem fs;
    private readonly string directory;
    private readonly StreamKey? key;
    private readonly FileStoreOptions options;
    private readonly ILogger logger;
    private readonly SemaphoreSlim signal = new(0, int.MaxValue);
    private readonly IStorageFile?[] slots = new IStorageFile?[2];

    private ConsumerStoreConfig config;
    private ConsumerState state = new();
    private bool hasState;
    private long version;
    private long writtenVersion;
    private long syncedVersion;
    private bool scheduled;
    private bool forceSync;
    private ulong slotCounter;
    private TaskCompletionSource? waiters;
    private Task? writer;
    private Timer? syncTimer;
    private bool stopped;
    private Exception? failure;
    private Task? deletion;

    private FileConsumerStore(FileStreamStore stream, IStorageFileSystem fs, string directory, ConsumerStoreConfig config, StreamKey? key, FileStoreOptions options, ILogger logger)
    {
        this.stream = stream;
        this.fs = fs;
        this.directory = directory;
        this.config = config;
        this.key = key;
        this.options = options;
        this.logger = logger;
    }

    public ConsumerStoreConfig Config
    {
        get
        {
            lock (sync)
            {
                return config;
            }
        }
    }

    public bool HasState
    {
        get
        {
            lock (sync)
            {
                return hasState;
            }
        }
    }

    private bool Persistent => !config.MemoryOnly;

    /// <summary>A folder name for a consumer name: safe characters kept, anything else hex-escaped.</summary>
    public static string FolderName(string name)
    {
        var builder = new StringBuilder(name.Length);
        foreach (var c in name)
        {
            if (char.IsAsciiLetterOrDigit(c) || c is '_' or '-')
            {
                builder.Append(c);
            }
            else
            {
                builder.Append('%').Append(((int)c).ToString("X4", System.Globalization.CultureInfo.InvariantCulture));
            }
        }

        return builder.ToString();
    }

    public static FileConsumerStore Create(FileStreamStore stream, IStorageFileSystem fs, string directory, ConsumerStoreConfig config, StreamKey? key, FileStoreOptions options, ILogger logger)
    {
        var store = new FileConsumerStore(stream, fs, directory, config, key, options, logger);
        if (store.Persistent)
        {
            if (fs.DirectoryExists(directory))
            {
                // Left over from a consumer of the same name deleted before a crash finished removing it.
                fs.DeleteDirectory(directory);
            }

            DurableDirectory.Create(fs, directory);
            store.WriteMeta();
            store.Start();
        }

        return store;
    }

    public static FileConsumerStore? Open(FileStreamStore stream, IStorageFileSystem fs, string directory, StreamKey? key, FileStoreOptions options, ILogger logger)
    {
        var meta = AtomicFile.Read(fs, Path.Combine(directory, MetaFile));
        if (meta is not null && key is not null)
        {
            meta = key.OpenFile(meta, "consumer meta"u8);
        }

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

        var store = new FileConsumerStore(stream, fs, directory, config, key, options, logger);
        store.LoadState();
        store.Start();
        return store;
    }

    public void SetStarting(ulong streamSequence)
    {
        lock (sync)
        {
            state.ApplyStarting(streamSequence);
            hasState = true;
            Changed();
        }
    }

    public void UpdateDelivered(ulong consumerSequence, ulong streamSequence, ulong deliveryCount, long timestamp)
    {
        lock (sync)
        {
            state.ApplyDelivered(config.AckPolicy, config.MaxDeliver, consumerSequence, streamSequence, deliveryCount, timestamp);
            hasState = true;
            Changed();
        }
    }

    public void UpdateAcks(ulong consumerSequence, ulong streamSequence)
    {
        lock (sync)
        {
            if (state.ApplyAck(config.AckPolicy, consumerSequence, streamSequence))
            {
                Changed();
            }
        }
    }

    public void Update(ConsumerState state)
    {
        ConsumerState.ThrowIfInconsistent(state);

        lock (sync)
        {
            this.state = state.Clone();
            hasState = true;
            Changed();
        }
    }

    public ConsumerState GetState()
    {
        lock (sync)
        {
            return state.Clone();
        }
    }

    public void UpdateConfig(ConsumerStoreConfig config)
    {
        ArgumentNullException.ThrowIfNull(config);
        lock (sync)
        {
            var wasPersistent = Persistent;
            this.config = config;
            if (Persistent && !stopped)
            {
                if (!wasPersistent)
                {
                    DurableDirectory.Create(fs, directory);
                }

                WriteMeta();
                if (writer is null)
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
        lock (sync)
        {
            if (!Persistent || stopped)
            {
                return default;
            }

            if (failure is not null)
            {
                return ValueTask.FromException(new IOException($"consumer {config.Name}: writing its state failed", failure));
            }

            if (syncedVersion >= version)
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
        lock (sync)
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

    // The folder is removed while the store is still in the stream's list, so a consumer of the same name opened
    // meanwhile waits for it instead of being created in a folder this deletion is about to remove.
    private async Task DeleteOnceAsync(TaskCompletionSource done)
    {
        Exception? error = null;
        try
        {
            await StopAsync(writeFinal: false).ConfigureAwait(false);
            if (fs.DirectoryExists(directory))
            {
                fs.DeleteDirectory(directory);
                fs.SyncDirectory(Path.GetDirectoryName(directory)!);
            }
        }
        catch (Exception ex) when (ex is IOException or UnauthorizedAccessException)
        {
            error = ex;
        }

        stream.ForgetConsumer(this);
        if (error is null)
        {
            done.SetResult();
        }
        else
        {
            done.SetException(error);
        }
    }

    /// <summary>Releases the writer's signal and timer (after <see cref="CloseAsync"/> or <see cref="DeleteAsync"/>).</summary>
    public void Dispose()
    {
        syncTimer?.Dispose();
        signal.Dispose();
    }

    /// <summary>Stops the writer after writing (and syncing) the latest state.</summary>
    public ValueTask CloseAsync() => StopAsync(writeFinal: true);

    private async ValueTask StopAsync(bool writeFinal)
    {
        lock (sync)
        {
            if (stopped)
            {
                return;
            }

            stopped = true;
        }

        if (syncTimer is not null)
        {
            await syncTimer.DisposeAsync().ConfigureAwait(false);
        }

        signal.Release();
        if (writer is not null)
        {
            await writer.ConfigureAwait(false);
        }

        if (writeFinal && Persistent && failure is null)
        {
            try
            {
                WriteRound(sync: true);
            }
            catch (IOException ex)
            {
                FileStoreLog.ConsumerWriteFailed(logger, config.Name, ex);
            }
        }

        foreach (var slot in slots)
        {
            slot?.Dispose();
        }

        TaskCompletionSource? pending;
        lock (sync)
        {
            pending = waiters;
            waiters = null;
        }

        pending?.TrySetResult();
    }

    private void Changed()
    {
        version++;
        if (Persistent && !stopped && !scheduled && writer is not null)
        {
            scheduled = true;
            signal.Release();
        }
    }

    private Task RegisterWaiter()
    {
        waiters ??= new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        if (!scheduled)
        {
            scheduled = true;
            signal.Release();
        }

        return waiters.Task;
    }

    private void Start()
    {
        writer = Task.Run(RunWriterAsync);
        if (options.SyncInterval is { } interval)
        {
            syncTimer = new Timer(
                _ =>
                {
                    lock (sync)
                    {
                        if (syncedVersion < writtenVersion && !stopped)
                        {
                            forceSync = true;
                            _ = RegisterWaiter();
                        }
                    }
                },
                null,
                interval,
                interval);
        }
    }

    private async Task RunWriterAsync()
    {
        while (true)
        {
            await signal.WaitAsync().ConfigureAwait(false);
            lock (sync)
            {
                if (stopped)
                {
                    return;
                }
            }

            try
            {
                WriteRound(sync: false);
            }
            catch (IOException ex)
            {
                TaskCompletionSource? pending;
                lock (sync)
                {
                    failure = ex;
                    pending = waiters;
                    waiters = null;
                }

                FileStoreLog.ConsumerWriteFailed(logger, config.Name, ex);
                pending?.TrySetException(ex);
                return;
            }
        }
    }

    /// <summary>Writes the latest state into the older slot and syncs it (always under the default policy).</summary>
    private void WriteRound(bool sync)
    {
        byte[] payload;
        long roundVersion;
        TaskCompletionSource? roundWaiters;
        bool syncNow;
        lock (this.sync)
        {
            scheduled = false;
            roundWaiters = waiters;
            waiters = null;
            syncNow = sync || forceSync || options.SyncInterval is null;
            forceSync = false;
            roundVersion = version;
            if (writtenVersion >= version && (!syncNow || syncedVersion >= writtenVersion))
            {
                roundWaiters?.TrySetResult();
                return;
            }

            var builder = new BinaryBuilder(64 + (state.Pending.Count * 24) + (state.Redelivered.Count * 16));
            ConsumerStateCodec.Encode(builder, state);
            payload = key is null ? builder.Written.ToArray() : key.SealFile(builder.Written, "consumer state"u8);
        }

        if (writtenVersion < roundVersion)
        {
            slotCounter++;
            var index = (int)(slotCounter % 2);
            var file = slots[index] ??= OpenSlot(index);
            var data = new byte[12 + payload.Length + 4];
            BinaryPrimitives.WriteUInt64LittleEndian(data, slotCounter);
            BinaryPrimitives.WriteInt32LittleEndian(data.AsSpan(8), payload.Length);
            payload.CopyTo(data, 12);
            BinaryPrimitives.WriteUInt32LittleEndian(data.AsSpan(data.Length - 4), Crc32C.Compute(data.AsSpan(0, data.Length - 4)));
            file.Write(data, 0);
            if (file.Length > data.Length)
            {
                file.SetLength(data.Length);
            }

            if (syncNow)
            {
                file.Sync();
            }
        }
        else if (syncNow)
        {
            slots[(int)(slotCounter % 2)]?.Sync();
        }

        lock (this.sync)
        {
            writtenVersion = Math.Max(writtenVersion, roundVersion);
            if (syncNow)
            {
                syncedVersion = Math.Max(syncedVersion, roundVersion);
            }
        }

        roundWaiters?.TrySetResult();
    }

    private IStorageFile OpenSlot(int index)
    {
        var path = Path.Combine(directory, SlotFiles[index]);
        var existed = fs.FileExists(path);
        var file = fs.Open(path, create: true);
        if (!existed)
        {
            file.Sync();
            fs.SyncDirectory(directory);
        }

        return file;
    }

    private void WriteMeta()
    {
        var encoded = ConsumerStateCodec.EncodeConfig(config);
        AtomicFile.Write(fs, Path.Combine(directory, MetaFile), key is null ? encoded : key.SealFile(encoded, "consumer meta"u8));
    }

    /// <summary>Loads the newer valid slot.</summary>
    private void LoadState()
    {
        ulong best = 0;
        for (var index = 0; index < SlotFiles.Length; index++)
        {
            var data = fs.ReadAll(Path.Combine(directory, SlotFiles[index]));
            if (data is null || data.Length < 16)
            {
                continue;
            }

            var counter = BinaryPrimitives.ReadUInt64LittleEndian(data);
            var length = BinaryPrimitives.ReadInt32LittleEndian(data.AsSpan(8));
            if (length < 0 || 12 + (long)length + 4 > data.Length
                || BinaryPrimitives.ReadUInt32LittleEndian(data.AsSpan(12 + length)) != Crc32C.Compute(data.AsSpan(0, 12 + length))
                || counter <= best)
            {
                continue;
            }

            var payload = data.AsSpan(12, length).ToArray();
            if (key is not null)
            {
                payload = key.OpenFile(payload, "consumer state"u8)!;
                if (payload is null)
                {
                    continue;
                }
            }

            try
            {
                state = ConsumerStateCodec.Decode(payload);
                best = counter;
                hasState = true;
            }
            catch (InvalidDataException)
            {
                FileStoreLog.ConsumerUnreadable(logger, directory);
            }
        }

        slotCounter = best;
        version = writtenVersion = syncedVersion = 0;
    }
}
