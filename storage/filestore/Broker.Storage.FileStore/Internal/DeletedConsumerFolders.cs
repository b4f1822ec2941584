using Broker.Storage.FileStore.Internal.Io;
using Microsoft.Extensions.Logging;

namespace Broker.Storage.FileStore.Internal;

/// <summary>
/// The folders of deleted consumers, renamed under the stream's <c>obs/</c> to a name no consumer folder has (it starts
/// with a dot) and removed here, one after the other on the thread pool, after the delete was answered. A consumer's
/// delete is durable with that rename and a shared sync of <c>obs/</c>; removing its files frees their blocks, which on a
/// disk mounted with <c>discard</c> waits for the device per file (0.5-8 ms each on the test machine, leave4), so a
/// disconnect storm of 10,000 MQTT QoS 1 sessions no longer waits for 20,000 of those before its deletes are answered.
/// A restart removes what a stop or a crash left (folders with a dot name are never opened as consumers).
/// </summary>
internal sealed class DeletedConsumerFolders(IStorageFileSystem fs, string root, ILogger logger)
{
    private const string Prefix = ".deleted-";

    private readonly object gate = new();
    // The folders by id, not path: a storm's 10,000 paths waiting were ~2 MB of strings, its ids are 160 KB.
    private Queue<Guid>? pending;
    private Task? running;
    private bool stopped;

    /// <summary>Whether a folder of <c>obs/</c> is no consumer's: consumer folders never start with a dot (<see cref="ConsumerFolderName"/>).</summary>
    public static bool IsNotConsumer(string folderName) => folderName.StartsWith('.');

    /// <summary>The id of a deleted consumer's folder name (<see cref="PathOf"/>); false for any other name.</summary>
    public static bool TryParse(string folderName, out Guid id)
    {
        id = default;
        return folderName.StartsWith(Prefix, StringComparison.Ordinal) && Guid.TryParseExact(folderName.AsSpan(Prefix.Length), "N", out id);
    }

    /// <summary>A new id for a deleted consumer's folder (<see cref="PathOf"/>): unique, whatever the consumer's name was.</summary>
    public static Guid NewId() => Guid.NewGuid();

    /// <summary>The folder of a deleted consumer's id under <c>obs/</c>.</summary>
    public string PathOf(Guid id) => Path.Combine(root, Prefix + id.ToString("N"));

    /// <summary>Queues a renamed folder (<see cref="PathOf"/>) for removal; after <see cref="StopAsync"/> it stays for the next start.</summary>
    public void Remove(Guid id)
    {
        lock (gate)
        {
            if (stopped)
            {
                return;
            }

            (pending ??= new Queue<Guid>()).Enqueue(id);
            running ??= Task.Run(RemoveQueued);
        }
    }

    /// <summary>Removes no more folders once the one being removed is gone (the stream closes or is deleted).</summary>
    public Task StopAsync()
    {
        lock (gate)
        {
            stopped = true;
            return running ?? Task.CompletedTask;
        }
    }

    private void RemoveQueued()
    {
        while (true)
        {
            Guid id;
            lock (gate)
            {
                if (stopped || pending is null || !pending.TryDequeue(out id))
                {
                    // The queue of a storm (16,384 slots for 10,000) is not kept once it is drained.
                    pending = null;
                    running = null;
                    return;
                }
            }

            var directory = PathOf(id);
            try
            {
                fs.DeleteDirectory(directory);
            }
            catch (Exception ex) when (ex is IOException or UnauthorizedAccessException)
            {
                FileStoreLog.DeletedFolderNotRemoved(logger, directory, ex);
            }
        }
    }
}
