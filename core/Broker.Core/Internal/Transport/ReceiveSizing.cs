namespace Broker.Core.Internal.Transport;

/// <summary>
/// How a connection's receive loop reads: how much buffer to ask for, and whether to wait for data with a zero-byte
/// receive before taking a buffer. One per receive loop, a struct held in its state machine (no object per
/// connection).
/// </summary>
/// <remarks>
/// <para>
/// Size: as nats-server's read loop (<c>client.go</c> readLoop: the buffer doubles after a read that fills it, up to
/// 64 KiB, and halves after short reads): a read that fills the buffer doubles the next one up to
/// <see cref="MaxSize"/>, and <see cref="ShortReadsToShrink"/> reads in a row that fill less than half of it halve it
/// again, down to <see cref="MinSize"/>. A 16 KiB message no longer takes two receives and a split across two pipe
/// segments each; a producer that sends large batches is read in a quarter of the receives.
/// </para>
/// <para>
/// Waiting: a zero-byte receive waits for data without holding a buffer, so an idle connection costs no receive
/// memory; but it is a syscall of its own (a one-byte peek) before every read. After two reads in a row of at least
/// <see cref="BusyBytes"/> each, or one that filled its buffer, the connection is busy (a producer's batches, not a
/// request, a PING or a CONNECT with a long JWT followed by its SUBs) and the next receive takes its buffer at once: one
/// syscall per read less. Such a connection that then goes quiet holds one receive buffer until its next input or its
/// close; one whose reads are small (idle clients, requesters, the 10,000 connections of the scale row) never does.
/// </para>
/// </remarks>
internal struct ReceiveSizing
{
    /// <summary>The first and smallest receive, 16 KiB (the input pipe's segment size).</summary>
    public const int MinSize = 16 * 1024;

    /// <summary>The largest receive, 64 KiB (nats-server's maxBufSize).</summary>
    public const int MaxSize = 64 * 1024;

    /// <summary>Two reads in a row of this many bytes or more make the next receive skip the zero-byte wait.</summary>
    public const int BusyBytes = 1024;

    /// <summary>Reads in a row that fill less than half the buffer before it halves.</summary>
    public const int ShortReadsToShrink = 4;

    /// <summary>
    /// The most bytes of a read whose parse stays on the socket engine's thread (<see cref="InputReaderScheduler"/>):
    /// a request, a reply, a PING or a few small messages; a publisher's batches are larger (docs/benchmarks.md
    /// "inline2": the read sizes of each row).
    /// </summary>
    public const int InlineParseBytes = 1024;

    /// <summary>
    /// A connection's first reads, whose parse goes to a worker whatever their size: its CONNECT (a password's bcrypt
    /// check, a JWT's signature) or a TLS handshake's flights, CPU that would stall every other socket of that engine.
    /// </summary>
    public const int SetupReads = 3;

    private int size;
    private int shortReads;
    private bool busy;
    private bool lastLarge;
    // Reads made, counted up to SetupReads (a byte: the struct stays 12 bytes in the receive loop's state machine).
    private byte reads;

    /// <summary>Whether a read of <paramref name="received"/> bytes is small enough to be parsed where it arrived.</summary>
    public readonly bool IsSmall(int received) => received <= InlineParseBytes && reads >= SetupReads;

    /// <summary>Whether the connection's first <see cref="SetupReads"/> reads (CONNECT, a handshake) are behind it.</summary>
    public readonly bool PastSetup => reads >= SetupReads;

    /// <summary>The buffer to ask the pipe for.</summary>
    public readonly int Size => size == 0 ? MinSize : size;

    /// <summary>Whether the next receive should first wait for data with a zero-byte receive.</summary>
    public readonly bool WaitFirst => !busy;

    /// <summary>Records a receive of <paramref name="received"/> bytes into a buffer of <paramref name="asked"/> bytes.</summary>
    public void Record(int received, int asked)
    {
        if (reads < SetupReads)
        {
            reads++;
        }

        var current = Size;
        if (received >= asked)
        {
            // Full: more is probably waiting; the next receive follows at once, into a larger buffer.
            size = Math.Min(current * 2, MaxSize);
            shortReads = 0;
            busy = lastLarge = true;
            return;
        }

        var large = received >= BusyBytes;
        busy = large && lastLarge;
        lastLarge = large;
        if (received < current / 2 && current > MinSize)
        {
            if (++shortReads >= ShortReadsToShrink)
            {
                size = current / 2;
                shortReads = 0;
            }
        }
        else
        {
            shortReads = 0;
        }
    }
}
