using System.Buffers.Binary;
using Broker.Storage.FileStore.Internal.Format;

namespace Broker.JetStream.Internal.Snapshots;

/// <summary>
/// The framing format of Snappy streams (google/snappy <c>framing_format.txt</c>) as S2 extends it (klauspost/compress
/// <c>s2</c>): a stream identifier chunk (<c>sNaPpY</c>, or <c>S2sTwO</c> for S2), then chunks of compressed (0x00) or
/// uncompressed (0x01) data, each with the masked CRC-32C of its uncompressed bytes; 0x80-0xfe are skipped, 0x02-0x7f
/// refused. nats-server wraps its snapshots' tar in S2 framing.
/// </summary>
internal static class SnappyFraming
{
    public const byte CompressedChunk = 0x00;
    public const byte UncompressedChunk = 0x01;
    public const byte StreamIdentifierChunk = 0xff;

    /// <summary>Snappy framing's largest uncompressed chunk, which S2 readers accept in a Snappy-framed stream.</summary>
    public const int SnappyMaxBlock = 65536;

    /// <summary>S2 framing's largest uncompressed chunk.</summary>
    public const int S2MaxBlock = 4 << 20;

    public static ReadOnlySpan<byte> SnappyIdentifier => "sNaPpY"u8;

    public static ReadOnlySpan<byte> S2Identifier => "S2sTwO"u8;

    /// <summary>The masked CRC-32C of <paramref name="data"/> (framing_format.txt section 3).</summary>
    public static uint MaskedCrc(ReadOnlySpan<byte> data)
    {
        var crc = Crc32C.Compute(data);
        return ((crc >> 15) | (crc << 17)) + 0xa282ead8;
    }
}

/// <summary>
/// Writes a Snappy-framed stream (chunks of at most 64 KiB compressed with IronSnappy, or stored when that is not
/// smaller), which Snappy's and S2's readers (nats-server's <c>s2.NewReader</c>) both accept. Write-only.
/// </summary>
internal sealed class SnappyFrameWriter(Stream inner) : Stream
{
    private readonly byte[] block = new byte[SnappyFraming.SnappyMaxBlock];
    private int length;
    private bool started;

    public override bool CanRead => false;

    public override bool CanSeek => false;

    public override bool CanWrite => true;

    public override long Length => throw new NotSupportedException();

    public override long Position { get => throw new NotSupportedException(); set => throw new NotSupportedException(); }

    public override void Write(byte[] buffer, int offset, int count) => Write(buffer.AsSpan(offset, count));

    public override void Write(ReadOnlySpan<byte> buffer)
    {
        while (!buffer.IsEmpty)
        {
            var take = Math.Min(block.Length - length, buffer.Length);
            buffer[..take].CopyTo(block.AsSpan(length));
            length += take;
            buffer = buffer[take..];
            if (length == block.Length)
            {
                EmitChunk();
            }
        }
    }

    public override void Flush()
    {
        EmitChunk();
        inner.Flush();
    }

    protected override void Dispose(bool disposing)
    {
        if (disposing)
        {
            Flush();
        }

        base.Dispose(disposing);
    }

    private void EmitChunk()
    {
        if (!started)
        {
            started = true;
            Span<byte> identifier = [SnappyFraming.StreamIdentifierChunk, 6, 0, 0, .. SnappyFraming.SnappyIdentifier];
            inner.Write(identifier);
        }

        if (length == 0)
        {
            return;
        }

        var data = block.AsSpan(0, length);
        var compressed = IronSnappy.Snappy.Encode(data);
        var stored = compressed.Length >= length;
        var body = stored ? data : compressed;
        Span<byte> header = stackalloc byte[8];
        var chunkLength = body.Length + 4;
        header[0] = stored ? SnappyFraming.UncompressedChunk : SnappyFraming.CompressedChunk;
        header[1] = (byte)chunkLength;
        header[2] = (byte)(chunkLength >> 8);
        header[3] = (byte)(chunkLength >> 16);
        BinaryPrimitives.WriteUInt32LittleEndian(header[4..], SnappyFraming.MaskedCrc(data));
        inner.Write(header);
        inner.Write(body);
        length = 0;
    }

    public override int Read(byte[] buffer, int offset, int count) => throw new NotSupportedException();

    public override long Seek(long offset, SeekOrigin origin) => throw new NotSupportedException();

    public override void SetLength(long value) => throw new NotSupportedException();
}
