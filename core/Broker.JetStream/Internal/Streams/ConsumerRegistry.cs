using System.Runtime.InteropServices;
using Broker.Abstractions;
using Broker.JetStream.Internal.Consumers;

namespace Broker.JetStream.Internal.Streams;

/// <summary>
/// A stream's consumers (nats-server <c>mset.consumers</c>): who they are, what they are told about the stream's
/// messages (stored, removed, purged), and the retention they drive: interest and work-queue streams remove a message
/// once the consumers that need it have acknowledged it (nats-server <c>ackMsg</c>).
/// </summary>
/// <remarks>
/// <c>gate</c> (<i>leaf</i>) guards changes; readers, the publish path among them, take the <see cref="Snapshot"/>
/// without a lock. The snapshot is a slot array that grows by doubling: a consumer added goes into the next free slot
/// of the array readers already hold (they see it or not, as with a new array), a removed one leaves its slot empty,
/// and the array is copied only when it is full or when as many slots are empty as held (compaction). Adding and
/// removing 10,000 consumers one at a time copied the whole list each time (O(n^2), about 400 MB of short-lived
/// arrays at 10,000); now each change costs O(1) amortised.
/// </remarks>
internal sealed class ConsumerRegistry(IStreamStore store)
{
    private const int FirstCapacity = 4;

    /// <summary>The capacity from which the name map, a quarter full, is trimmed.</summary>
    internal const int TrimNamesFrom = 1024;

    private readonly Lock gate = new();

    // The consumer under each name, and its slot in the array.
    private readonly Dictionary<string, (Consumer Consumer, int Slot)> consumers = new(StringComparer.Ordinal);

    // Read by the publish path without a lock; written under the gate. Slots at and past `used` are empty.
    private Consumer?[] slots = [];
    private int used;
    private int count;

    public ConsumerSnapshot Snapshot => new(Volatile.Read(ref slots));

    public int Count => Volatile.Read(ref count);

    /// <summary>The name map's capacity (tests read it).</summary>
    internal int NameCapacity
    {
        get
        {
            lock (gate)
            {
                return consumers.Capacity;
            }
        }
    }

    public Consumer? Find(string name)
    {
        lock (gate)
        {
            return consumers.TryGetValue(name, out var entry) ? entry.Consumer : null;
        }
    }

    /// <summary>The consumer of a name read from a subject (an ack or a pull request), without making a string.</summary>
    public Consumer? Find(ReadOnlySpan<char> name)
    {
        lock (gate)
        {
            return consumers.GetAlternateLookup<ReadOnlySpan<char>>().TryGetValue(name, out var entry) ? entry.Consumer : null;
        }
    }

    /// <summary>Every consumer, ordered by name.</summary>
    public List<Consumer> ByName()
    {
        lock (gate)
        {
            return [.. consumers.Values.Select(e => e.Consumer).OrderBy(c => c.Name, StringComparer.Ordinal)];
        }
    }

    /// <summary>Adds a consumer, or replaces the one of the same name.</summary>
    public void Add(Consumer consumer)
    {
        lock (gate)
        {
            if (consumers.TryGetValue(consumer.Name, out var existing))
            {
                consumers[consumer.Name] = (consumer, existing.Slot);
                Volatile.Write(ref slots[existing.Slot], consumer);
                return;
            }

            if (used == slots.Length)
            {
                // Full: compact into an array with room for as many again (holes are dropped here too).
                Publish(Math.Max(FirstCapacity, count * 2));
            }

            consumers[consumer.Name] = (consumer, used);

            // The element write publishes the consumer (its fields written before) to readers of this array.
            Volatile.Write(ref slots[used], consumer);
            used++;
            Volatile.Write(ref count, count + 1);
        }
    }

    /// <summary>Removes <paramref name="consumer"/> if it is still the one registered under its name.</summary>
    public void Remove(Consumer consumer)
    {
        lock (gate)
        {
            if (!consumers.TryGetValue(consumer.Name, out var existing) || !ReferenceEquals(existing.Consumer, consumer))
            {
                return;
            }

            consumers.Remove(consumer.Name);
            if (consumers.Capacity >= TrimNamesFrom && consumers.Count < consumers.Capacity / 4)
            {
                // A Dictionary never shrinks by itself: after 10,000 MQTT QoS 1 sessions left, the stream's name map
                // kept its grown buckets and entries (issue 25). Trimming to twice what is left keeps copies linear.
                consumers.TrimExcess(consumers.Count * 2);
            }

            Volatile.Write(ref slots[existing.Slot], null);
            Volatile.Write(ref count, count - 1);
            if (used - count >= Math.Max(FirstCapacity, count))
            {
                // As many holes as consumers: copy the consumers into a smaller array, so readers skip few holes.
                Publish(Math.Max(FirstCapacity, count * 2));
            }
        }
    }

    /// <summary>Copies the consumers into a new array of <paramref name="capacity"/> slots and gives it to readers.</summary>
    private void Publish(int capacity)
    {
        var next = new Consumer?[capacity];
        var at = 0;
        foreach (var name in consumers.Keys)
        {
            // The entry is updated in place: the dictionary is not changed while its keys are walked.
            ref var entry = ref CollectionsMarshal.GetValueRefOrNullRef(consumers, name);
            next[at] = entry.Consumer;
            entry.Slot = at;
            at++;
        }

        used = at;
        Volatile.Write(ref slots, next);
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
            if (Count > 1)
            {
                var message = new StoredMessage();
                if (store.Load(sequence, message) != LoadStatus.Found)
                {
                    return;
                }

                foreach (var other in Snapshot)
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
