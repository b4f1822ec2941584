using System.Buffers;
using System.Buffers.Binary;
using System.IO.Compression;
using System.IO.Pipelines;
using System.Text;

namespace Broker.Adapters.WebSocket.Internal;

/// <summary>RFC 6455 frame constants and the server's frame writing (never masked), close payloads and compression.</summary>
internal static class Frames
{
    public const byte Continuation = 0;
    public const byte Text = 1;
    public const byte Binary = 2;
    public const byte Close = 8;
    public const byte Ping = 9;
    public const byte Pong = 10;

    public const byte FinalBit = 0x80;
    public const byte CompressedBit = 0x40;
    public const byte ReservedBits = 0x30;
    public const byte MaskBit = 0x80;
    public const int MaxControlPayload = 125;

    public const ushort NormalClosure = 1000;
    public const ushort ProtocolError = 1002;
    public const ushort NoStatusReceived = 1005;
    public const ushort InvalidPayloadData = 1007;
    public const ushort MessageTooBig = 1009;

    // Frames shorter than this are not worth compressing (nats-server's threshold).
    public const int CompressThreshold = 64;

    // A raw DEFLATE sync flush ends with this; permessage-deflate drops it on the wire (RFC 7692 7.2.1).
    private static readonly byte[] SyncFlushTail = [0x00, 0x00, 0xFF, 0xFF];

    public static void WriteHeader(PipeWriter writer, byte opcode, bool compressed, long length)
    {
        var span = writer.GetSpan(10);
        span[0] = (byte)(FinalBit | (compressed ? CompressedBit : 0) | opcode);
        int size;
        if (length < 126)
        {
            span[1] = (byte)length;
            size = 2;
        }
        else if (length <= ushort.MaxValue)
        {
            span[1] = 126;
            BinaryPrimitives.WriteUInt16BigEndian(span[2..], (ushort)length);
            size = 4;
        }
        else
        {
            span[1] = 127;
            BinaryPrimitives.WriteUInt64BigEndian(span[2..], (ulong)length);
            size = 10;
        }

        writer.Advance(size);
    }

    /// <summary>A whole unmasked control frame.</summary>
    public static byte[] Control(byte opcode, ReadOnlySpan<byte> payload)
    {
        var frame = new byte[2 + payload.Length];
        frame[0] = (byte)(FinalBit | opcode);
        frame[1] = (byte)payload.Length;
        payload.CopyTo(frame.AsSpan(2));
        return frame;
    }

    /// <summary>A close frame with a status and a reason, cut to fit a control frame as nats-server does ("...").</summary>
    public static byte[] CloseFrame(ushort status, string reason)
    {
        if (Encoding.UTF8.GetByteCount(reason) > MaxControlPayload - 2)
        {
            reason = reason[..(MaxControlPayload - 5)] + "...";
        }

        var payload = new byte[2 + Encoding.UTF8.GetByteCount(reason)];
        BinaryPrimitives.WriteUInt16BigEndian(payload, status);
        Encoding.UTF8.GetBytes(reason, payload.AsSpan(2));
        return Control(Close, payload);
    }

    /// <summary>Close codes a peer may send (nats-server <c>wsIsValidCloseStatus</c>).</summary>
    public static bool IsValidCloseStatus(int code)
        => code is >= 1000 and < 5000 and not (1004 or 1005 or 1006 or 1015) && code is not (>= 1016 and <= 2999);

    /// <summary>
    /// The most a connection keeps of the buffer it compresses or decompresses messages in, between messages: enough for
    /// the usual message, so steady traffic allocates no buffer, without holding a large one per connection.
    /// </summary>
    public const int KeptScratchCapacity = 64 * 1024;

    /// <summary>
    /// Compresses one message on its own (no context takeover) into <paramref name="scratch"/> (emptied first) and
    /// returns it without the sync-flush tail: a view of the scratch buffer, valid until its next use.
    /// </summary>
    public static ReadOnlySpan<byte> Deflate(in ReadOnlySequence<byte> message, MemoryStream scratch)
    {
        scratch.SetLength(0);
        int length;
        using (var deflate = new DeflateStream(scratch, CompressionLevel.Fastest, leaveOpen: true))
        {
            foreach (var segment in message)
            {
                deflate.Write(segment.Span);
            }

            // Flush is a sync flush; what Dispose adds afterwards (the final block) is not part of the message.
            deflate.Flush();
            length = (int)scratch.Length;
        }

        var compressed = scratch.GetBuffer().AsSpan(0, length);
        return compressed.EndsWith(SyncFlushTail) ? compressed[..^SyncFlushTail.Length] : compressed;
    }

    /// <summary>
    /// Decompresses one message into <paramref name="writer"/>; returns <see langword="false"/> when it would exceed
    /// <paramref name="limit"/> bytes or is not valid DEFLATE data.
    /// </summary>
    public static bool Inflate(MemoryStream compressed, PipeWriter writer, long limit)
    {
        compressed.Write(SyncFlushTail);
        compressed.Position = 0;
        using var inflate = new DeflateStream(compressed, CompressionMode.Decompress, leaveOpen: true);
        long total = 0;
        try
        {
            while (true)
            {
                var span = writer.GetSpan(16 * 1024);
                var read = inflate.Read(span);
                if (read == 0)
                {
                    return true;
                }

                total += read;
                if (total > limit)
                {
                    return false;
                }

                writer.Advance(read);
            }
        }
        catch (InvalidDataException)
        {
            return false;
        }
    }
}
