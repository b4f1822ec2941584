namespace Broker.Abstractions;

/// <summary>
/// A message read from a stream store into memory the caller owns: the loads of <see cref="IStreamStore"/> copy the
/// subject, headers and payload into this object's buffer, which grows to the largest message seen and is reused,
/// so loading into the same instance allocates nothing in steady state (nats-server's <c>StoreMsg</c> with its
/// reused <c>buf</c>). Its contents stay valid until the next load into it, whatever happens to the stream meanwhile.
/// </summary>
/// <remarks>Not thread-safe: one owner at a time. A store fills it with <see cref="Set"/> or <see cref="Prepare"/>.</remarks>
public sealed class StoredMessage
{
    private byte[] buffer = [];
    private int subjectLength;
    private int headersLength;
    private int payloadLength;

    /// <summary>The stream sequence; 0 before the first load.</summary>
    public ulong Sequence { get; private set; }

    /// <summary>When the message was stored, in nanoseconds since the Unix epoch (UTC).</summary>
    public long Timestamp { get; private set; }

    /// <summary>The subject (UTF-8).</summary>
    public ReadOnlyMemory<byte> Subject => new(buffer, 0, subjectLength);

    /// <summary>The NATS header block (<c>NATS/1.0\r\n...\r\n\r\n</c>), or empty.</summary>
    public ReadOnlyMemory<byte> Headers => new(buffer, subjectLength, headersLength);

    /// <summary>The payload.</summary>
    public ReadOnlyMemory<byte> Payload => new(buffer, subjectLength + headersLength, payloadLength);

    /// <summary>The capacity of the reused buffer, in bytes.</summary>
    public int Capacity => buffer.Length;

    /// <summary>
    /// Sets the identity and sizes of the message being loaded and returns the span the store writes the subject,
    /// headers and payload into, back to back in that order. Grows the buffer when it is too small.
    /// </summary>
    /// <param name="sequence">The stream sequence.</param>
    /// <param name="timestamp">The store timestamp, nanoseconds since the Unix epoch.</param>
    /// <param name="subjectSize">The subject length in bytes.</param>
    /// <param name="headersSize">The header block length in bytes (0 when none).</param>
    /// <param name="payloadSize">The payload length in bytes.</param>
    /// <returns>A span of exactly <c>subjectSize + headersSize + payloadSize</c> bytes.</returns>
    /// <exception cref="ArgumentOutOfRangeException">A length is negative.</exception>
    public Span<byte> Prepare(ulong sequence, long timestamp, int subjectSize, int headersSize, int payloadSize)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(subjectSize);
        ArgumentOutOfRangeException.ThrowIfNegative(headersSize);
        ArgumentOutOfRangeException.ThrowIfNegative(payloadSize);
        var total = subjectSize + headersSize + payloadSize;
        if (buffer.Length < total)
        {
            // Round up so a stream of slowly growing messages does not reallocate on every load.
            buffer = new byte[Math.Max(total, Math.Min(Math.Max(buffer.Length * 2, 256), Array.MaxLength))];
        }

        Sequence = sequence;
        Timestamp = timestamp;
        subjectLength = subjectSize;
        headersLength = headersSize;
        payloadLength = payloadSize;
        return buffer.AsSpan(0, total);
    }

    /// <summary>Copies a message in (see <see cref="Prepare"/>).</summary>
    /// <param name="sequence">The stream sequence.</param>
    /// <param name="timestamp">The store timestamp, nanoseconds since the Unix epoch.</param>
    /// <param name="subject">The subject.</param>
    /// <param name="headers">The header block, or empty.</param>
    /// <param name="payload">The payload.</param>
    public void Set(ulong sequence, long timestamp, ReadOnlySpan<byte> subject, ReadOnlySpan<byte> headers, ReadOnlySpan<byte> payload)
    {
        var span = Prepare(sequence, timestamp, subject.Length, headers.Length, payload.Length);
        subject.CopyTo(span);
        headers.CopyTo(span[subject.Length..]);
        payload.CopyTo(span[(subject.Length + headers.Length)..]);
    }

    /// <summary>Forgets the message (keeps the buffer).</summary>
    public void Clear()
    {
        Sequence = 0;
        Timestamp = 0;
        subjectLength = headersLength = payloadLength = 0;
    }
}
