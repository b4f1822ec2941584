using Broker.Abstractions;
using Broker.Storage.FileStore.Internal.Crypto;
using Broker.Storage.FileStore.Internal.Io;
using Microsoft.Extensions.Logging;

namespace Broker.Storage.FileStore.Internal;

/// <summary>
/// The consumer-facing part of a stream store: its consumer stores by name (under <c>obs/</c>), the shared syncs of
/// <c>obs/</c>, and what the consumer stores read of the stream (the file system, options, logger and key: a consumer
/// store holds a reference to this, not copies, issue 25).
/// </summary>
/// <remarks>
/// The map is guarded by the stream store's state lock (<c>sync</c>, given here), as it was when the stream store held
/// it: a create checks that the stream is open and adds under the same lock the stream's close takes its snapshot under,
/// so no consumer store is added after the stream closed its stores.
/// </remarks>
internal sealed class StreamConsumers
{
    private readonly object sync;
    private readonly StreamCommitter committer;
    // By name: a stream of an MQTT broker may hold a consumer per QoS 1 subscription, tens of thousands.
    private readonly ConsumerStoreMap consumers = new();
    private SharedDirectorySync? folders;
    private DeletedConsumerFolders? deleted;

    public StreamConsumers(object sync, StreamCommitter committer, IStorageFileSystem fs, FileStoreOptions options, ILogger logger, string streamDirectory, StreamKey? key)
    {
        this.sync = sync;
        this.committer = committer;
        FileSystem = fs;
        Options = options;
        Logger = logger;
        Key = key;
        Root = Path.Combine(streamDirectory, FileStreamStore.ConsumersFolder);
    }

    /// <summary>The stream's file system.</summary>
    public IStorageFileSystem FileSystem { get; }

    /// <summary>The stream's options.</summary>
    public FileStoreOptions Options { get; }

    /// <summary>The stream's logger.</summary>
    public ILogger Logger { get; }

    /// <summary>The stream's encryption key (null when not encrypted).</summary>
    public StreamKey? Key { get; }

    /// <summary>The stream's <c>obs/</c> folder, which holds a folder per consumer.</summary>
    public string Root { get; }

    /// <summary>The shared syncs of <c>obs/</c>: consumer folders made or removed together share one (made on first use).</summary>
    public SharedDirectorySync Folders =>
        Volatile.Read(ref folders) ?? Interlocked.CompareExchange(ref folders, new SharedDirectorySync(FileSystem, Root), null) ?? folders!;

    /// <summary>The folders of deleted consumers, removed after their deletes were answered (made on first use).</summary>
    public DeletedConsumerFolders Deleted =>
        Volatile.Read(ref deleted) ?? Interlocked.CompareExchange(ref deleted, new DeletedConsumerFolders(FileSystem, Root, Logger), null) ?? deleted!;

    /// <summary>The map's capacity (tests read it).</summary>
    public int Capacity
    {
        get
        {
            lock (sync)
            {
                return consumers.Capacity;
            }
        }
    }

    /// <summary>
    /// The consumer store of <paramref name="config"/>'s name: a new one (its folder made by its first round), or the
    /// existing one with the configuration updated; after the deletion of one of that name under way.
    /// </summary>
    public IConsumerStore Open(ConsumerStoreConfig config)
    {
        while (true)
        {
            Task deletion;
            lock (sync)
            {
                if (committer.Closed)
                {
                    throw new ObjectDisposedException(nameof(FileStreamStore), "store is closed");
                }

                if (!consumers.TryGetValue(config.Name, out var existing))
                {
                    var consumer = FileConsumerStore.Create(this, ConsumerFolderName.Of(config.Name), config);
                    consumers.Add(consumer);
                    return consumer;
                }

                if (existing.Deletion is not { } pending)
                {
                    existing.UpdateConfig(config);
                    return existing;
                }

                deletion = pending;
            }

            // A consumer of the same name is being deleted: its folder goes first (it stops its writer, removes the
            // folder, then leaves the list), so the new one neither reuses a stopped store nor loses its folder to it.
            deletion.Wait();
        }
    }

    /// <summary>Opens every consumer store under <c>obs/</c>, at the stream's recovery.</summary>
    public void Recover()
    {
        lock (sync)
        {
            consumers.Recover(this, Root);
        }
    }

    /// <summary>Removes a deleted consumer store (unless one of the same name replaced it).</summary>
    public void Forget(FileConsumerStore consumer)
    {
        lock (sync)
        {
            consumers.Forget(consumer);
        }
    }

    public List<FileConsumerStore> Snapshot()
    {
        lock (sync)
        {
            return consumers.Snapshot();
        }
    }

    /// <summary>
    /// Closes every consumer store (each writes and syncs its latest state), at the stream's close or deletion, and stops
    /// removing deleted consumers' folders (the next start removes what is left; a stream deletion removes all).
    /// </summary>
    public async ValueTask CloseAllAsync()
    {
        foreach (var consumer in Snapshot())
        {
            await consumer.CloseAsync().ConfigureAwait(false);
        }

        if (Volatile.Read(ref deleted) is { } removals)
        {
            await removals.StopAsync().ConfigureAwait(false);
        }
    }
}
