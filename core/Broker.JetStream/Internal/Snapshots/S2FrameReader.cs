namespace Broker.JetStream.Internal.Snapshots;

/// <summary>
/// Reads a Snappy- or S2-framed stream (see <see cref="SnappyFraming"/>), decoding its blocks with
/// <see cref="S2Block"/> and checking each chunk's CRC; what nats-server's snapshots are wrapped in. Read-only.
/// </summary>
/// <exception cref="InvalidDataException">From <see cref="Read(Span{byte})"/>: the stream is not valid framing.</exception>
internal sealed class S2FrameReader(Stream inner) : Stream
{
    private readonly byte[] header = new byte[4];
    private byte[] chunk = [];
    private byte[] decoded = [];
    private int position;
    private int available;
    private bool identified;

    public override bool CanRead => true;

    public override bool CanSeek => false;

    public override bool CanWrite => false;

    public override long Length => throw new NotSupportedException();

    public override long Position { get => throw new NotSupportedException(); set => throw new NotSupportedException(); }

    public override int Read(byte[] buffer, int offset, int count) => Read(buffer.AsSpan(offset, count));

    public override int Read(Span<byte> buffer)
    {
        while (position == available)
        {
            if (!NextChunk())
            {
                return 0;
            }
        }

        var take = Math.Min(buffer.Length, available - position);
        decoded.AsSpan(position, take).CopyTo(buffer);
        position += take;
        return take;
    }

    /// <summary>Reads chunks until one holds data; false at the end of the stream.</summary>
    private bool NextChunk()
    {
        var read = inner.ReadAtLeast(header, 4, throwOnEndOfStream: false);
        if (read == 0)
        {
            return false;
        }

        if (read < 4)
        {
            throw new InvalidDataException("truncated snappy frame header");
        }

        var type = header[0];
        var length = header[1] | (header[2] << 8) | (header[3] << 16);
        if (!identified && type != SnappyFraming.StreamIdentifierChunk)
        {
            throw new InvalidDataException("snappy stream does not start with a stream identifier");
        }

        if (chunk.Length < length)
        {
            chunk = new byte[Math.Max(length, 64 * 1024)];
        }

        inner.ReadExactly(chunk, 0, length);
        var body = chunk.AsSpan(0, length);
        switch (type)
        {
            case SnappyFraming.StreamIdentifierChunk:
                if (!body.SequenceEqual(SnappyFraming.SnappyIdentifier) && !body.SequenceEqual(SnappyFraming.S2Identifier))
                {
                    throw new InvalidDataException("unknown snappy stream identifier");
                }

                identified = true;
                return true;
            case SnappyFraming.CompressedChunk or SnappyFraming.UncompressedChunk:
                if (length < 4)
                {
                    throw new InvalidDataException("short snappy chunk");
                }

                var crc = BitConverter.ToUInt32(body[..4]);
                var data = body[4..];
                if (type == SnappyFraming.CompressedChunk)
                {
                    available = S2Block.Decode(data, ref decoded);
                }
                else
                {
                    if (decoded.Length < data.Length)
                    {
                        decoded = new byte[data.Length];
                    }

                    data.CopyTo(decoded);
                    available = data.Length;
                }

                if (available > SnappyFraming.S2MaxBlock || SnappyFraming.MaskedCrc(decoded.AsSpan(0, available)) != crc)
                {
                    throw new InvalidDataException("snappy chunk checksum mismatch");
                }

                position = 0;
                return true;
            case <= 0x7f:
                throw new InvalidDataException($"unsupported snappy chunk type 0x{type:x2}");
            default:
                // Padding (0xfe) and reserved skippable chunks (0x80-0xfd, S2's index among them).
                return true;
        }
    }

    public override void Flush()
    {
    }

    public override long Seek(long offset, SeekOrigin origin) => throw new NotSupportedException();

    public override void SetLength(long value) => throw new NotSupportedException();

    public override void Write(byte[] buffer, int offset, int count) => throw new NotSupportedException();
}
