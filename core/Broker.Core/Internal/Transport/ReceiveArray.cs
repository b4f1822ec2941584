using System.Buffers;

namespace Broker.Core.Internal.Transport;

/// <summary>
/// The unread bytes of a <see cref="SocketInputReader"/>: one array from the shared pool, held only while bytes are
/// unread (or a receive into it is in flight). A packet larger than the array grows it (a larger one is rented and the
/// bytes copied); consumed bytes are moved to the front when the array is full. A struct in the reader's field, so it
/// costs no object of its own. Used under the reader's monitor only.
/// </summary>
internal struct ReceiveArray
{
    private byte[]? array;
    private int start;
    private int end;

    /// <summary>Whether an array is held.</summary>
    public readonly bool IsHeld => array is not null;

    /// <summary>Whether no bytes are unread.</summary>
    public readonly bool IsEmpty => start == end;

    /// <summary>The unread bytes, one segment.</summary>
    public readonly ReadOnlySequence<byte> Unread => array is null || start == end
        ? ReadOnlySequence<byte>.Empty
        : new ReadOnlySequence<byte>(array, start, end - start);

    /// <summary>Where the next receive goes (after <see cref="EnsureSpace"/>).</summary>
    public readonly Memory<byte> Free => array.AsMemory(end);

    /// <summary>A receive put <paramref name="count"/> bytes at <see cref="Free"/>.</summary>
    public void Received(int count) => end += count;

    /// <summary>
    /// Consumes up to <paramref name="consumed"/>; true when the reader examined everything unread (the next read waits
    /// for more). Positions of an empty result (no array) consume nothing.
    /// </summary>
    public bool Advance(SequencePosition consumed, SequencePosition examined)
    {
        if (array is null || !ReferenceEquals(consumed.GetObject(), array))
        {
            return true;
        }

        var consumedAt = consumed.GetInteger();
        var examinedAt = ReferenceEquals(examined.GetObject(), array) ? examined.GetInteger() : end;
        if (consumedAt < start || consumedAt > end || examinedAt < consumedAt)
        {
            throw new InvalidOperationException("The position is outside the last read.");
        }

        start = consumedAt;
        return examinedAt >= end;
    }

    /// <summary>Room at the end of the array for the next receive: an array of <paramref name="size"/> when none is held.</summary>
    public void EnsureSpace(int size)
    {
        if (array is null)
        {
            array = ArrayPool<byte>.Shared.Rent(size);
            start = end = 0;
            return;
        }

        if (end < array.Length)
        {
            return;
        }

        if (start > 0)
        {
            Buffer.BlockCopy(array, start, array, 0, end - start);
            end -= start;
            start = 0;
            return;
        }

        // One unread packet fills the array: a larger one.
        var larger = ArrayPool<byte>.Shared.Rent(array.Length * 2);
        Buffer.BlockCopy(array, 0, larger, 0, end);
        ArrayPool<byte>.Shared.Return(array);
        array = larger;
    }

    /// <summary>Gives the array back to the pool; what was unread is dropped.</summary>
    public void Return()
    {
        if (array is not null)
        {
            ArrayPool<byte>.Shared.Return(array);
            array = null;
        }

        start = end = 0;
    }
}
