using Broker.Abstractions;

namespace Broker.Storage.FileStore.Internal;

/// <summary>
/// The first round of a new consumer store, made off the caller: the API loop does no I/O per create, and the creates
/// that come together share their syncs of <c>obs/</c> (issue 25). The round makes the folder (a leftover of a consumer
/// of this name whose deletion a crash cut short is removed) and <c>meta.inf</c>, writes the first state slot, syncs the
/// folder (once, with the slot's entry when the round created one) and then <c>obs/</c> through the stream's shared
/// sync, so the create is answered (its flush completes) only once all of it is durable.
/// </summary>
/// <remarks>
/// Made by the creating round only, with the configuration it writes (taken under the store's lock as the round starts),
/// and dropped when it ends: the idle store keeps a flag, not a reference (issue 25).
/// </remarks>
internal sealed class ConsumerCreation(StreamConsumers stream, string directory, ConsumerStoreConfig written)
{
    /// <summary>Whether <paramref name="current"/> is the configuration the round wrote (else it changed meanwhile: a re-create).</summary>
    public bool Wrote(ConsumerStoreConfig? current) => ReferenceEquals(current, written);

    /// <summary>The folder and <c>meta.inf</c>, written but not yet synced (<see cref="Finish"/> syncs them).</summary>
    public void MakeFolder()
    {
        var fs = stream.FileSystem;
        if (fs.DirectoryExists(directory))
        {
            fs.DeleteDirectory(directory);
        }

        fs.CreateDirectory(directory);
        ConsumerMetaFile.Write(fs, directory, stream.Key, written, syncDirectory: false);
    }

    /// <summary>
    /// After the round's slot write: the folder synced (unless the slot's sync of it, <paramref name="folderSynced"/>,
    /// made its entries durable), then its entry in <c>obs/</c>, with the other consumers' made meanwhile.
    /// </summary>
    public void Finish(bool folderSynced)
    {
        if (!folderSynced)
        {
            stream.FileSystem.SyncDirectory(directory);
        }

        stream.Folders.Sync();
    }
}
