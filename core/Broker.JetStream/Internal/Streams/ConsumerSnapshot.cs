using System.Collections;
using Broker.JetStream.Internal.Consumers;

namespace Broker.JetStream.Internal.Streams;

/// <summary>
/// The consumers a <see cref="ConsumerRegistry"/> held when it was read: its slot array, where a removed consumer's
/// slot is <see langword="null"/> and the slots past the last added one are too. Enumerates the consumers, skipping
/// the empty slots, without allocating.
/// </summary>
internal readonly struct ConsumerSnapshot(Consumer?[] slots) : IEnumerable<Consumer>
{
    /// <summary>Whether no slot holds a consumer.</summary>
    public bool IsEmpty
    {
        get
        {
            foreach (var slot in slots)
            {
                if (slot is not null)
                {
                    return false;
                }
            }

            return true;
        }
    }

    public Enumerator GetEnumerator() => new(slots);

    // For callers off the hot path (tests, LINQ); foreach takes the struct enumerator above.
    IEnumerator<Consumer> IEnumerable<Consumer>.GetEnumerator()
    {
        foreach (var slot in slots)
        {
            if (slot is not null)
            {
                yield return slot;
            }
        }
    }

    IEnumerator IEnumerable.GetEnumerator() => ((IEnumerable<Consumer>)this).GetEnumerator();

    /// <summary>Walks the occupied slots.</summary>
    public struct Enumerator(Consumer?[] slots)
    {
        private int index = -1;

        // The consumer MoveNext read: a removal may empty its slot before Current is asked (reading the slot again
        // there gave the publish path a null consumer, a NullReferenceException in OnStored).
        private Consumer? current;

        public readonly Consumer Current => current!;

        public bool MoveNext()
        {
            while (++index < slots.Length)
            {
                if (Volatile.Read(ref slots[index]) is { } consumer)
                {
                    current = consumer;
                    return true;
                }
            }

            current = null;
            return false;
        }
    }
}
