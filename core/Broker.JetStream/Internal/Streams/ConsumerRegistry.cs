using Broker.Abstractions;
using Broker.JetStream.Internal.Consumers;

namespace Broker.JetStream.Internal.Streams;

/// <summary>
/// A stream's consumers (nats-server <c>mset.consumers</c>): who they are, what they are told about the stream's
/// messages (stored, removed, purged), and the retention they drive: interest and work-queue streams remove a message
/// once the consumers that need it have acknowledged it (nats-server <c>ackMsg</c>).
/// </summary>
/// <remarks>
/// <c>gate</c> (<i>leaf</i>) guards changes; readers, the publish path among them, take the copy-on-write
/// <see cref="Snapshot"/> without a lock.
/// </remarks>
internal sealed class ConsumerRegistry(IStreamStore store)
{
    private readonly Lock gate = new();
    private readonly Dictionary<string, Consumer> consumers = new(StringComparer.Ordinal);

    // Copy-on-write list read by the publish path without a lock.
    private Consumer[] snapshot = [];

    public Consumer[] Snapshot => Volatile.Read(ref snapshot);

    public int Count => Snapshot.Length;

    public Consumer? Find(string name)
    {
        lock (gate)
        {
            return consumers.GetValueOrDefault(name);
        }
    }

    /// <summary>Every consumer, ordered by name.</summary>
    public List<Consumer> ByName()
    {
        lock (gate)
        {
            return [.. consumers.Values.OrderBy(c => c.Name, StringComparer.Ordinal)];
        }
    }

    /// <summary>Adds a consumer, or replaces the one of the same name.</summary>
    public void Add(Consumer consumer)
    {
        lock (gate)
        {
            consumers[consumer.Name] = consumer;
            Volatile.Write(ref snapshot, [.. consumers.Values]);
        }
    }

    /// <summary>Removes <paramref name="consumer"/> if it is still the one registered under its name.</summary>
    public void Remove(Consumer consumer)
    {
        lock (gate)
        {
            if (consumers.TryGetValue(consumer.Name, out var existing) && ReferenceEquals(existing, consumer))
            {
                consumers.Remove(consumer.Name);
                Volatile.Write(ref snapshot, [.. consumers.Values]);
            }
        }
    }

    /// <summary>Tells the consumers whose filter matches that a message was stored.</summary>
    public void OnStored(ReadOnlySpan<byte> subject, ulong sequence)
    {
        foreach (var consumer in Snapshot)
        {
            if (consumer.Matches(subject))
            {
                consumer.OnNewMessage(sequence);
            }
        }
    }

    /// <summary>Whether a consumer would deliver a message on <paramref name="subject"/> (an interest stream keeps only those).</summary>
    public bool HasInterestIn(ReadOnlySpan<byte> subject)
    {
        foreach (var consumer in Snapshot)
        {
            if (consumer.Matches(subject))
            {
                return true;
            }
        }

        return false;
    }

    /// <summary>Tells every consumer that the store removed messages (limits, age; nats-server <c>storeUpdates</c>).</summary>
    public void OnRemoved(ulong sequence, ReadOnlySpan<byte> subject, long messages)
    {
        foreach (var consumer in Snapshot)
        {
            consumer.OnMessageRemoved(sequence, subject, messages);
        }
    }

    /// <summary>Moves the consumers a purge concerns (all, or those whose filter matches <paramref name="filter"/>) past it.</summary>
    public void OnPurged(ReadOnlySpan<byte> filter, ulong first, ulong last)
    {
        foreach (var consumer in Snapshot)
        {
            if (filter.IsEmpty || consumer.MatchesFilter(filter))
            {
                consumer.OnPurged(first, last);
            }
        }
    }

    /// <summary>
    /// A consumer acknowledged <paramref name="sequence"/>: on a work-queue stream the message goes; on an interest
    /// stream it goes once no other consumer still needs it (nats-server <c>ackMsg</c>, <c>checkInterest</c>).
    /// </summary>
    public void OnAcknowledged(Consumer by, ulong sequence, RetentionPolicy retention)
    {
        if (retention == RetentionPolicy.Limits)
        {
            return;
        }

        if (retention == RetentionPolicy.Interest)
        {
            var others = Snapshot;
            if (others.Length > 1)
            {
                var message = new StoredMessage();
                if (store.Load(sequence, message) != LoadStatus.Found)
                {
                    return;
                }

                foreach (var other in others)
                {
                    if (!ReferenceEquals(other, by) && other.NeedsAck(sequence, message.Subject.Span))
                    {
                        return;
                    }
                }
            }
        }

        store.Remove(sequence);
    }
}
