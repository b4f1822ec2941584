namespace Broker.Storage.FileStore.Internal;

/// <summary>
/// Removals by limits collected under the stream lock and reported to the storage update handler after it is released
/// (the contract calls the handler outside the store's locks). One buffer per thread, reused: no allocation in steady
/// state.
/// </summary>
internal static class RemovalEvents
{
    [ThreadStatic]
    private static Buffer? current;

    public static bool Any => current is { Count: > 0 };

    public static void Add(ulong sequence, ulong size, ReadOnlySpan<byte> subject)
    {
        var buffer = current ??= new Buffer();
        buffer.Add(sequence, size, subject);
    }

    /// <summary>Reports and clears this thread's removals.</summary>
    public static void Drain(Broker.Abstractions.StorageUpdateHandler? handler)
    {
        var buffer = current;
        if (buffer is null || buffer.Count == 0)
        {
            return;
        }

        try
        {
            for (var i = 0; i < buffer.Count; i++)
            {
                var (sequence, size, start, length) = buffer.Entries[i];
                handler?.Invoke(-1, -(long)size, sequence, buffer.Subjects.AsSpan(start, length));
            }
        }
        finally
        {
            buffer.Clear();
        }
    }

    private sealed class Buffer
    {
        public (ulong Sequence, ulong Size, int Start, int Length)[] Entries = new (ulong, ulong, int, int)[16];
        public byte[] Subjects = new byte[1024];
        private int used;

        public int Count { get; private set; }

        public void Add(ulong sequence, ulong size, ReadOnlySpan<byte> subject)
        {
            if (Count == Entries.Length)
            {
                Array.Resize(ref Entries, Count * 2);
            }

            if (used + subject.Length > Subjects.Length)
            {
                Array.Resize(ref Subjects, Math.Max(Subjects.Length * 2, used + subject.Length));
            }

            subject.CopyTo(Subjects.AsSpan(used));
            Entries[Count++] = (sequence, size, used, subject.Length);
            used += subject.Length;
        }

        public void Clear()
        {
            Count = 0;
            used = 0;
        }
    }
}
