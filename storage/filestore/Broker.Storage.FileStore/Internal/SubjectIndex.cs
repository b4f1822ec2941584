using System.Text;

namespace Broker.Storage.FileStore.Internal;

/// <summary>The state of one subject: how many messages, the first and last sequence (nats-server's <c>psim</c> entry).</summary>
internal struct SubjectEntry
{
    public byte[] Subject;
    public ulong Count;
    public ulong First;
    public ulong Last;

    /// <summary>The first was removed and not looked up yet: <see cref="First"/> is only a lower bound.</summary>
    public bool FirstStale;
}

/// <summary>
/// Per-subject state of a stream, looked up by the subject's UTF-8 bytes without allocating (open addressing, linear
/// probing, backward-shift deletion). A new subject allocates its key once. Not thread-safe: the stream lock guards it.
/// </summary>
internal sealed class SubjectIndex
{
    private SubjectEntry[] entries = new SubjectEntry[16];
    private int[] slots = NewSlots(32);
    private int count;
    private int[] free = [];
    private int freeCount;
    private int used;

    public int Count => count;

    /// <summary>The entry index of a subject, or -1.</summary>
    public int Find(ReadOnlySpan<byte> subject)
    {
        var mask = slots.Length - 1;
        for (var slot = Hash(subject) & mask; ; slot = (slot + 1) & mask)
        {
            var index = slots[slot];
            if (index < 0)
            {
                return -1;
            }

            if (entries[index].Subject.AsSpan().SequenceEqual(subject))
            {
                return index;
            }
        }
    }

    /// <summary>The entry index of a subject, added with zero counts when new.</summary>
    public int GetOrAdd(ReadOnlySpan<byte> subject)
    {
        var found = Find(subject);
        if (found >= 0)
        {
            return found;
        }

        if ((count + 1) * 2 > slots.Length)
        {
            Rehash(slots.Length * 2);
        }

        int index;
        if (freeCount > 0)
        {
            index = free[--freeCount];
        }
        else
        {
            if (used == entries.Length)
            {
                Array.Resize(ref entries, entries.Length * 2);
            }

            index = used++;
        }

        entries[index] = new SubjectEntry { Subject = subject.ToArray() };
        Insert(index);
        count++;
        return index;
    }

    public ref SubjectEntry this[int index] => ref entries[index];

    /// <summary>Removes a subject by entry index.</summary>
    public void Remove(int index)
    {
        var mask = slots.Length - 1;
        var slot = Hash(entries[index].Subject) & mask;
        while (slots[slot] != index)
        {
            slot = (slot + 1) & mask;
        }

        // Backward-shift deletion keeps every probe chain unbroken without tombstones.
        var hole = slot;
        for (var next = (hole + 1) & mask; slots[next] >= 0; next = (next + 1) & mask)
        {
            var home = Hash(entries[slots[next]].Subject) & mask;
            if (((next - home) & mask) >= ((next - hole) & mask))
            {
                slots[hole] = slots[next];
                hole = next;
            }
        }

        slots[hole] = -1;
        entries[index] = default;
        if (freeCount == free.Length)
        {
            Array.Resize(ref free, Math.Max(8, free.Length * 2));
        }

        free[freeCount++] = index;
        count--;
    }

    public void Clear()
    {
        entries = new SubjectEntry[16];
        slots = NewSlots(32);
        count = 0;
        used = 0;
        freeCount = 0;
    }

    /// <summary>The entry indexes in use (for iteration; the order is arbitrary).</summary>
    public IEnumerable<int> Indexes()
    {
        for (var i = 0; i < used; i++)
        {
            if (entries[i].Subject is not null)
            {
                yield return i;
            }
        }
    }

    public static string ToText(byte[] subject) => Encoding.UTF8.GetString(subject);

    private static int Hash(ReadOnlySpan<byte> subject)
    {
        var hash = new HashCode();
        hash.AddBytes(subject);
        return hash.ToHashCode() & int.MaxValue;
    }

    private static int[] NewSlots(int size)
    {
        var array = new int[size];
        Array.Fill(array, -1);
        return array;
    }

    private void Insert(int index)
    {
        var mask = slots.Length - 1;
        var slot = Hash(entries[index].Subject) & mask;
        while (slots[slot] >= 0)
        {
            slot = (slot + 1) & mask;
        }

        slots[slot] = index;
    }

    private void Rehash(int size)
    {
        slots = NewSlots(size);
        for (var i = 0; i < used; i++)
        {
            if (entries[i].Subject is not null)
            {
                Insert(i);
            }
        }
    }
}
