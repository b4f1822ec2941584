using System.Buffers;

namespace Broker.Storage.FileStore.Internal;

/// <summary>
/// A stream store's own free lists of block buffers: record caches, offset tables and not-live bitmaps. A block that
/// seals, is evicted or is removed gives its buffers back here, and the next tail block takes them, so a stream that
/// keeps appending reuses the same few arrays instead of renting from <see cref="ArrayPool{T}.Shared"/> (which
/// allocates whenever its per-core stacks are empty, and trims them under memory pressure). The lists are small and
/// bounded; what does not fit goes back to the shared pool. The stream store's lock guards every call.
/// </summary>
internal sealed class BlockBuffers(long blockSize)
{
    /// <summary>Full-size caches kept for the next tail blocks.</summary>
    public const int MaxFreeCaches = 2;

    /// <summary>Offset tables and bitmaps kept (small: a few hundred KiB at most for an 8 MiB block).</summary>
    public const int MaxFreeTables = 4;

    private readonly Stack<byte[]> caches = new(MaxFreeCaches);
    private readonly Stack<uint[]> offsets = new(MaxFreeTables);
    private readonly Stack<ulong[]> bits = new(MaxFreeTables);

    /// <summary>Caches in the free list (for tests and diagnostics).</summary>
    public int FreeCaches => caches.Count;

    /// <summary>
    /// A cache of at least <paramref name="minimum"/> bytes: a free full-size one when there is one, else rented from
    /// the shared pool (a small stream's tail starts small and grows by doubling, so it never holds a full block).
    /// </summary>
    public byte[] RentCache(int minimum)
    {
        if (caches.TryPeek(out var free) && free.Length >= minimum)
        {
            return caches.Pop();
        }

        return ArrayPool<byte>.Shared.Rent(Math.Max(minimum, 1));
    }

    /// <summary>Whether a full-size cache is free (the next tail block then never grows its cache).</summary>
    public bool HasFullCache => caches.Count > 0;

    /// <summary>Takes back a cache no block and no commit round uses any more.</summary>
    public void ReturnCache(byte[] cache)
    {
        if (cache.Length >= blockSize && caches.Count < MaxFreeCaches)
        {
            caches.Push(cache);
            return;
        }

        ArrayPool<byte>.Shared.Return(cache);
    }

    /// <summary>An offset table of at least <paramref name="minimum"/> entries (contents undefined).</summary>
    public uint[] RentOffsets(int minimum)
    {
        if (offsets.TryPeek(out var free) && free.Length >= minimum)
        {
            return offsets.Pop();
        }

        return ArrayPool<uint>.Shared.Rent(minimum);
    }

    /// <summary>The largest free offset table, or <see langword="null"/>: a new tail block's table that never grows.</summary>
    public uint[]? TakeOffsets() => offsets.TryPop(out var free) ? free : null;

    public void ReturnOffsets(uint[] table)
    {
        // Tables grow by doubling, so the one kept last is the largest: keep that order by dropping smaller ones.
        if (offsets.Count < MaxFreeTables && (!offsets.TryPeek(out var top) || top.Length <= table.Length))
        {
            offsets.Push(table);
            return;
        }

        ArrayPool<uint>.Shared.Return(table);
    }

    /// <summary>A zeroed bitmap of at least <paramref name="words"/> words.</summary>
    public ulong[] RentBits(int words)
    {
        if (bits.TryPeek(out var free) && free.Length >= words)
        {
            bits.Pop();
            Array.Clear(free);
            return free;
        }

        return new ulong[words];
    }

    public void ReturnBits(ulong[] bitmap)
    {
        if (bits.Count < MaxFreeTables && (!bits.TryPeek(out var top) || top.Length <= bitmap.Length))
        {
            bits.Push(bitmap);
        }
    }

    /// <summary>Gives everything back to the shared pool (the store closes).</summary>
    public void Clear()
    {
        while (caches.TryPop(out var cache))
        {
            ArrayPool<byte>.Shared.Return(cache);
        }

        while (offsets.TryPop(out var table))
        {
            ArrayPool<uint>.Shared.Return(table);
        }

        bits.Clear();
    }
}
