namespace Broker.Storage.MemStore.Internal;

/// <summary>
/// The messages one store call removed, collected under the store's lock and reported to the storage-update handler
/// after it is released (a handler may call back into the store). One buffer per thread is reused, so reporting
/// allocates nothing; a nested call on the same thread takes a fresh one.
/// </summary>
internal sealed class RemovalBuffer
{
    [ThreadStatic]
    private static RemovalBuffer? cached;

    private (ulong Sequence, SubjectRecord Subject, ulong Size)[] items = new (ulong, SubjectRecord, ulong)[8];

    public int Count { get; private set; }

    public static RemovalBuffer Rent()
    {
        var buffer = cached ?? new RemovalBuffer();
        cached = null;
        return buffer;
    }

    public static void Return(RemovalBuffer buffer)
    {
        buffer.Clear();
        cached = buffer;
    }

    public void Add(ulong sequence, SubjectRecord subject, ulong size)
    {
        if (Count == items.Length)
        {
            Array.Resize(ref items, items.Length * 2);
        }

        items[Count++] = (sequence, subject, size);
    }

    public (ulong Sequence, SubjectRecord Subject, ulong Size) this[int index] => items[index];

    public void Clear()
    {
        Array.Clear(items, 0, Count);
        Count = 0;
    }
}
