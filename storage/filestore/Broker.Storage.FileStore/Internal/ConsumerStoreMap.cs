
namespace Broker.Storage.FileStore.Internal;

/// <summary>
/// A stream store's consumer stores by consumer name. The stream store's lock guards every call. A
/// <see cref="Dictionary{TKey, TValue}"/> never shrinks by itself: after 10,000 MQTT QoS 1 sessions left, the map kept
/// its grown buckets and entries (issue 25, ~420 KB), so a removal that leaves a large map a quarter full trims it to
/// twice what is left (copies stay linear in the removals).
/// </summary>
internal sealed class ConsumerStoreMap
{
    /// <summary>The capacity from which the map, a quarter full, is trimmed.</summary>
    public const int TrimFrom = 1024;

    private readonly Dictionary<string, FileConsumerStore> consumers = new(StringComparer.Ordinal);

    /// <summary>The map's capacity (tests read it).</summary>
    public int Capacity => consumers.Capacity;

    public bool TryGetValue(string name, out FileConsumerStore consumer) => consumers.TryGetValue(name, out consumer!);

    public void Add(FileConsumerStore consumer) => consumers.Add(consumer.Name, consumer);

    /// <summary>
    /// Opens every consumer store under <paramref name="root"/> (the stream's <c>obs</c> folder) at the stream's recovery;
    /// the folders of deleted consumers that a stop or a crash left are removed in the background.
    /// </summary>
    public void Recover(StreamConsumers stream, string root)
    {
        foreach (var name in stream.FileSystem.ListDirectories(root))
        {
            if (DeletedConsumerFolders.IsNotConsumer(name))
            {
                if (DeletedConsumerFolders.TryParse(name, out var deleted))
                {
                    stream.Deleted.Remove(deleted);
                }
            }
            else if (FileConsumerStore.Open(stream, Path.Combine(root, name)) is { } consumer)
            {
                consumers[consumer.Name] = consumer;
            }
        }
    }

    /// <summary>Removes <paramref name="consumer"/> if it is still the one under its name (a new one may have replaced it).</summary>
    public void Forget(FileConsumerStore consumer)
    {
        if (!consumers.TryGetValue(consumer.Name, out var current) || !ReferenceEquals(current, consumer))
        {
            return;
        }

        consumers.Remove(consumer.Name);
        if (consumers.Capacity >= TrimFrom && consumers.Count < consumers.Capacity / 4)
        {
            consumers.TrimExcess(consumers.Count * 2);
        }
    }

    public List<FileConsumerStore> Snapshot() => [.. consumers.Values];
}
