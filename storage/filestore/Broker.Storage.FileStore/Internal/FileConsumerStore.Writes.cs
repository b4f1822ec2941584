using System.Buffers.Binary;
using Broker.Abstractions;
using Broker.Storage.FileStore.Internal.Crypto;
using Broker.Storage.FileStore.Internal.Format;
using Broker.Storage.FileStore.Internal.Io;

namespace Broker.Storage.FileStore.Internal;

/// <summary>A consumer's state on disk: when write rounds run, what they write, and its slot files (<c>o.dat</c>, <c>o2.dat</c>).</summary>
internal sealed partial class FileConsumerStore
{
    private void Changed()
    {
        version++;
        if (Persistent && !stopped && started)
        {
            Schedule();
        }
    }

    private Task RegisterWaiter()
    {
        waiters ??= new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        Schedule();
        return waiters.Task;
    }

    /// <summary>Wants a round, queueing one unless one is queued or running (it takes the change). The store's lock held.</summary>
    private void Schedule()
    {
        if (scheduled || failure is not null)
        {
            return;
        }

        scheduled = true;
        if (!running)
        {
            running = true;
            ThreadPool.UnsafeQueueUserWorkItem(this, preferLocal: false);
        }
    }

    private void Start()
    {
        started = true;
        if (Options.SyncInterval is { } interval)
        {
            syncTimer = new Timer(
                _ =>
                {
                    lock (this)
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

    /// <summary>
    /// The write rounds of one burst of changes, on the thread pool: rounds while changes keep coming, then the store
    /// is idle (no task, no open file) until the next change queues it again.
    /// </summary>
    void IThreadPoolWorkItem.Execute()
    {
        while (true)
        {
            TaskCompletionSource? stopping = null;
            bool write;
            lock (this)
            {
                write = !stopped && scheduled && failure is null;
                if (!write)
                {
                    running = false;
                    stopping = idle;
                    idle = null;
                }
            }

            if (!write)
            {
                stopping?.TrySetResult();
                return;
            }

            try
            {
                WriteRound(sync: false);
            }
            catch (Exception ex) when (ex is IOException or UnauthorizedAccessException)
            {
                // A creating round's folder may be refused (permissions): the create's flush reports it, as a write failure.
                TaskCompletionSource? pending;
                lock (this)
                {
                    failure = ex;
                    pending = waiters;
                    waiters = null;
                }

                CloseSlots();
                FileStoreLog.ConsumerWriteFailed(Logger, name, ex);
                pending?.TrySetException(ex);
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
        ConsumerCreation? created = null;
        lock (this)
        {
            scheduled = false;
            roundWaiters = waiters;
            waiters = null;
            if (creating)
            {
                created = new ConsumerCreation(stream, Directory, config!);
            }

            // A creating round always syncs: the create is answered after it, whatever the sync interval.
            syncNow = sync || forceSync || created is not null || Options.SyncInterval is null;
            forceSync = false;
            roundVersion = version;
            if (created is null && writtenVersion >= version && (!syncNow || syncedVersion >= writtenVersion))
            {
                roundWaiters?.TrySetResult();
                return;
            }

            var builder = new BinaryBuilder(64 + (state.PendingCount * 24) + (state.RedeliveredCount * 16));
            ConsumerStateCodec.Encode(builder, state);
            payload = Key is null ? builder.Written.ToArray() : Key.SealFile(builder.Written, "consumer state"u8);
        }

        created?.MakeFolder();

        var folderSynced = false;
        if (writtenVersion < roundVersion)
        {
            slotCounter++;
            var index = (int)(slotCounter % 2);
            var file = Slot(index) ??= OpenSlot(index);
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
                folderSynced = MakeEntryDurable(index);
            }
        }
        else if (syncNow && Slot((int)(slotCounter % 2)) is { } written)
        {
            written.Sync();
            MakeEntryDurable((int)(slotCounter % 2));
        }

        if (syncNow)
        {
            // Synced: nothing needs the files until the next change.
            CloseSlots();
        }

        if (created is not null)
        {
            created.Finish(folderSynced);
            lock (this)
            {
                creating = false;
                if (created.Wrote(config))
                {
                    KeepMetadataOnDisk();
                }
                else if (!stopped)
                {
                    // Changed while the round made the folder (a re-create): written as an update writes it.
                    WriteMeta();
                }
            }
        }

        lock (this)
        {
            writtenVersion = Math.Max(writtenVersion, roundVersion);
            if (syncNow)
            {
                syncedVersion = Math.Max(syncedVersion, roundVersion);
            }
        }

        roundWaiters?.TrySetResult();
    }

    /// <summary>Opens a slot for a round, creating it the first time (durable with the round's sync, <see cref="MakeEntryDurable"/>).</summary>
    private IStorageFile OpenSlot(int index) => FileSystem.Open(Path.Combine(Directory, SlotFiles[index]), create: (slotsCreated & (1 << index)) == 0);

    /// <summary>
    /// After a slot's data sync: a slot file this store created gets its folder synced once, which makes its entry
    /// durable (the data sync before it made the contents so; an empty new file needs no sync of its own). True when it synced.
    /// </summary>
    private bool MakeEntryDurable(int index)
    {
        if ((slotsCreated & (1 << index)) == 0)
        {
            FileSystem.SyncDirectory(Directory);
            slotsCreated |= 1 << index;
            return true;
        }

        return false;
    }

    private void CloseSlots()
    {
        slot0?.Dispose();
        slot0 = null;
        slot1?.Dispose();
        slot1 = null;
    }

    private ref IStorageFile? Slot(int index) => ref index == 0 ? ref slot0 : ref slot1;

    /// <summary>Writes <c>meta.inf</c> durably, then keeps the configuration without its Metadata (the file holds it). Lock held or constructing.</summary>
    private void WriteMeta()
    {
        // After an update or a re-create: the configuration is held until this write (KeepMetadataOnDisk drops it).
        ConsumerMetaFile.Write(FileSystem, Directory, Key, config!);
        KeepMetadataOnDisk();
    }

    /// <summary>Drops the configuration that <c>meta.inf</c> now holds durably (the fields keep what the store uses). Lock held or constructing.</summary>
    private void KeepMetadataOnDisk()
    {
        if (config is not null)
        {
            metadataOnDisk = !config.Metadata.IsEmpty;
            config = null;
        }
    }

    /// <summary>Takes a configuration: held whole until <c>meta.inf</c> holds it, its fields for good. Lock held or constructing.</summary>
    private void Take(ConsumerStoreConfig taken)
    {
        config = taken;
        ackPolicy = taken.AckPolicy;
        maxDeliver = taken.MaxDeliver;
        memoryOnly = taken.MemoryOnly;
        durable = taken.Durable;
    }

    /// <summary>Loads the newer valid slot.</summary>
    private void LoadState()
    {
        ulong best = 0;
        for (var index = 0; index < SlotFiles.Length; index++)
        {
            var data = FileSystem.ReadAll(Path.Combine(Directory, SlotFiles[index]));
            if (data is not null)
            {
                slotsCreated |= 1 << index;
            }

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
            if (Key is not null)
            {
                payload = Key.OpenFile(payload, "consumer state"u8)!;
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
                FileStoreLog.ConsumerUnreadable(Logger, Directory);
            }
        }

        slotCounter = best;
        version = writtenVersion = syncedVersion = 0;
    }
}
