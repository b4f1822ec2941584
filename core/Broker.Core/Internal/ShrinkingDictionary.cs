using System.Collections.Concurrent;
using System.Diagnostics.CodeAnalysis;

namespace Broker.Core.Internal;

/// <summary>
/// A concurrent map of what is connected that gives its grown buckets back once most of its entries have gone (issue
/// 25). A <see cref="ConcurrentDictionary{TKey, TValue}"/> never shrinks: after 10,000 connections left, the server's
/// client registry and the listener's connection set each kept a bucket array of 140-290 KB in the large object heap.
/// Here, once the entries fall to a quarter of their peak (from <see cref="MinimumPeak"/> on), the remove that gets
/// there copies what is left into a fresh dictionary sized for it. Adds and removes take one lock so that the swap
/// loses neither; they happen once per connection, never per message. Lookups, counts and enumeration read
/// <see cref="Current"/> without the lock, as before: an enumeration that began before a swap sees the old dictionary,
/// a snapshot of the moment, as a concurrent dictionary's own enumeration may. It is for maps read without a lock; a
/// map only ever touched under its own lock needs none of this: a <see cref="Dictionary{TKey, TValue}"/> trimmed with
/// <see cref="Dictionary{TKey, TValue}.TrimExcess(int)"/> (as the in-process client's waiting requests are).
/// </summary>
internal sealed class ShrinkingDictionary<TKey, TValue>
    where TKey : notnull
{
    /// <summary>The peak below which a dictionary is left as it is: its buckets are not worth a copy.</summary>
    public const int MinimumPeak = 1024;

    private readonly Lock gate = new();
    private ConcurrentDictionary<TKey, TValue> current = new();

    // Both only changed under the gate: ConcurrentDictionary.Count takes every bucket lock.
    private int count;
    private int peak;

    /// <summary>The dictionary as it is now; do not add to it or remove from it directly.</summary>
    public ConcurrentDictionary<TKey, TValue> Current => Volatile.Read(ref current);

    /// <summary>Fresh dictionaries made so far (tests read it).</summary>
    public int Shrinks { get; private set; }

    /// <summary>Adds <paramref name="key"/> or replaces its value.</summary>
    public void Set(TKey key, TValue value)
    {
        lock (gate)
        {
            if (current.TryAdd(key, value))
            {
                count++;
                peak = Math.Max(peak, count);
            }
            else
            {
                current[key] = value;
            }
        }
    }

    /// <summary>Removes <paramref name="key"/>; the dictionary is replaced by a smaller one when few entries are left.</summary>
    public bool TryRemove(TKey key, [MaybeNullWhen(false)] out TValue value)
    {
        lock (gate)
        {
            if (!current.TryRemove(key, out value))
            {
                return false;
            }

            count--;
            if (peak >= MinimumPeak && count <= peak / 4)
            {
                Volatile.Write(ref current, new ConcurrentDictionary<TKey, TValue>(current));
                peak = count;
                Shrinks++;
            }

            return true;
        }
    }
}
