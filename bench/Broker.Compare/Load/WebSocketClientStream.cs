using System.Buffers.Binary;
using System.Net;
using System.Net.Sockets;
using System.Runtime.InteropServices;
using System.Text;
using Broker.Adapters.WebSocket.Internal;

namespace Broker.Compare.Load;

/// <summary>
/// The client side of RFC 6455 over a blocking socket, as a stream of the NATS bytes it carries. Each
/// <see cref="Write(ReadOnlySpan{byte})"/> is one masked binary frame, so a publisher's 64 KiB batch of PUBs goes
/// out as one frame, as a real client flushes its buffer. <see cref="Read(Span{byte})"/> decodes the server's
/// frames (unmasked; binary or text; possibly fragmented) and returns the payload bytes of as many as have arrived,
/// so one call can span frames the way a TCP read spans NATS frames; pings are answered, and a close frame fails
/// the connection with the server's status and reason. Not thread-safe: one thread reads and writes, as every
/// workload connection is used.
/// </summary>
internal sealed partial class WebSocketClientStream : Stream
{
    private const int ReceiveBufferSize = 256 * 1024;

    // A control frame's payload is at most 125 bytes (RFC 6455 5.5).
    private const int MaxControlPayload = 125;

    private const byte OpContinuation = 0x0;
    private const byte OpText = 0x1;
    private const byte OpBinary = 0x2;
    private const byte OpClose = 0x8;
    private const byte OpPing = 0x9;
    private const byte OpPong = 0xA;

    private readonly Socket socket;

    // Bytes from the socket not consumed yet: [start, end).
    private readonly byte[] received = new byte[ReceiveBufferSize];
    private int start;
    private int end;

    // Payload bytes of the current data frame still to hand out, and whether a fragmented message is open.
    private long payloadLeft;
    private bool inMessage;

    // Header and masked payload of the frame being sent; grows to the largest send.
    private byte[] frame = new byte[14 + (64 * 1024)];

    private WebSocketClientStream(Socket socket) => this.socket = socket;

    public override bool CanRead => true;

    public override bool CanWrite => true;

    public override bool CanSeek => false;

    public override long Length => throw new NotSupportedException();

    public override long Position
    {
        get => throw new NotSupportedException();
        set => throw new NotSupportedException();
    }

    /// <summary>Sends the upgrade request on the connected <paramref name="socket"/> and checks the 101 answer.</summary>
    public static WebSocketClientStream Connect(Socket socket, IPEndPoint address)
    {
        ArgumentNullException.ThrowIfNull(socket);
        ArgumentNullException.ThrowIfNull(address);
        var stream = new WebSocketClientStream(socket);
        stream.Handshake(address);
        return stream;
    }

    public override int Read(Span<byte> buffer)
    {
        var written = 0;
        while (written < buffer.Length)
        {
            if (payloadLeft > 0)
            {
                if (start == end)
                {
                    // Hand out what is here rather than block for more; block only when there is nothing yet.
                    if (written > 0 || !Fill())
                    {
                        break;
                    }

                    continue;
                }

                var take = (int)Math.Min(Math.Min(payloadLeft, end - start), buffer.Length - written);
                received.AsSpan(start, take).CopyTo(buffer[written..]);
                start += take;
                written += take;
                payloadLeft -= take;
                continue;
            }

            var header = TryReadHeader(written > 0);
            if (header == HeaderResult.Ready)
            {
                continue;
            }

            // Incomplete header: wait for more only when nothing can be returned yet.
            if (header == HeaderResult.Stop || written > 0 || !Fill())
            {
                break;
            }
        }

        return written;
    }

    public override void Write(ReadOnlySpan<byte> buffer) => SendFrame(OpBinary, buffer);

    public override int Read(byte[] buffer, int offset, int count) => Read(buffer.AsSpan(offset, count));

    public override void Write(byte[] buffer, int offset, int count) => Write(buffer.AsSpan(offset, count));

    public override void Flush()
    {
    }

    public override long Seek(long offset, SeekOrigin origin) => throw new NotSupportedException();

    public override void SetLength(long value) => throw new NotSupportedException();

    private enum HeaderResult
    {
        /// <summary>A frame header (and any control frame) was consumed.</summary>
        Ready,

        /// <summary>Not enough bytes for the next header.</summary>
        Incomplete,

        /// <summary>A close frame is next; return what was read before it first.</summary>
        Stop,
    }

    /// <summary>
    /// Consumes the next frame header: a data frame sets <see cref="payloadLeft"/>; a control frame is handled
    /// whole (ping answered, pong ignored, close thrown once no payload is pending for the caller).
    /// </summary>
    private HeaderResult TryReadHeader(bool hasOutput)
    {
        var available = received.AsSpan(start, end - start);
        if (available.Length < 2)
        {
            return HeaderResult.Incomplete;
        }

        var first = available[0];
        var second = available[1];
        var opcode = (byte)(first & 0x0F);
        var final = (first & 0x80) != 0;
        if ((first & 0x70) != 0)
        {
            throw new IOException("The server set RSV bits in a WebSocket frame (no extension was negotiated).");
        }

        if ((second & 0x80) != 0)
        {
            throw new IOException("The server masked a WebSocket frame (RFC 6455 forbids it).");
        }

        var length7 = second & 0x7F;
        var headerLength = length7 switch { 126 => 4, 127 => 10, _ => 2 };
        if (available.Length < headerLength)
        {
            return HeaderResult.Incomplete;
        }

        var length = length7 switch
        {
            126 => BinaryPrimitives.ReadUInt16BigEndian(available[2..]),
            127 => (long)BinaryPrimitives.ReadUInt64BigEndian(available[2..]),
            _ => length7,
        };

        if (opcode is OpContinuation or OpText or OpBinary)
        {
            if (inMessage != (opcode == OpContinuation))
            {
                throw new IOException(inMessage
                    ? "The server started a new WebSocket message inside a fragmented one."
                    : "The server sent a continuation frame outside a fragmented message.");
            }

            inMessage = !final;
            payloadLeft = length;
            start += headerLength;
            return HeaderResult.Ready;
        }

        if (opcode is not (OpClose or OpPing or OpPong) || !final || length > MaxControlPayload)
        {
            throw new IOException($"The server sent an invalid WebSocket frame (opcode {opcode}, final {final}, {length} bytes).");
        }

        if (available.Length < headerLength + length)
        {
            return HeaderResult.Incomplete;
        }

        var payload = available.Slice(headerLength, (int)length);
        if (opcode == OpClose)
        {
            if (hasOutput)
            {
                return HeaderResult.Stop;
            }

            throw Closed(payload);
        }

        start += headerLength + (int)length;
        if (opcode == OpPing)
        {
            SendFrame(OpPong, payload);
        }

        return HeaderResult.Ready;
    }

    /// <summary>Reads more bytes from the socket; false when the server closed the connection.</summary>
    private bool Fill()
    {
        if (start != end)
        {
            // Only a partial header or control frame (at most 139 bytes) waits here, since payload is handed out
            // as it arrives: move it to the front so the read gets the whole buffer.
            received.AsSpan(start, end - start).CopyTo(received);
        }

        end -= start;
        start = 0;

        var count = socket.Receive(received.AsSpan(end));
        end += count;
        return count > 0;
    }

    private IOException Closed(ReadOnlySpan<byte> payload)
    {
        var status = payload.Length >= 2 ? BinaryPrimitives.ReadUInt16BigEndian(payload).ToString(System.Globalization.CultureInfo.InvariantCulture) : "no status";
        var reason = payload.Length > 2 ? Encoding.UTF8.GetString(payload[2..]) : string.Empty;
        try
        {
            // Echo the status, as RFC 6455 asks; the connection is over either way.
            SendFrame(OpClose, payload[..Math.Min(payload.Length, 2)]);
        }
        catch (Exception ex) when (ex is SocketException or ObjectDisposedException)
        {
        }

        return new IOException($"The server closed the WebSocket ({status}{(reason.Length > 0 ? ": " + reason : string.Empty)}).");
    }

    /// <summary>Sends one final frame, masked with a fresh key as RFC 6455 requires of clients.</summary>
    private void SendFrame(byte opcode, ReadOnlySpan<byte> payload)
    {
        var headerLength = payload.Length switch { < 126 => 2, <= ushort.MaxValue => 4, _ => 10 };
        var total = headerLength + 4 + payload.Length;
        if (frame.Length < total)
        {
            frame = new byte[total];
        }

        frame[0] = (byte)(0x80 | opcode);
        switch (headerLength)
        {
            case 2:
                frame[1] = (byte)(0x80 | payload.Length);
                break;
            case 4:
                frame[1] = 0x80 | 126;
                BinaryPrimitives.WriteUInt16BigEndian(frame.AsSpan(2), (ushort)payload.Length);
                break;
            default:
                frame[1] = 0x80 | 127;
                BinaryPrimitives.WriteUInt64BigEndian(frame.AsSpan(2), (ulong)payload.Length);
                break;
        }

        var key = (uint)Random.Shared.NextInt64();
        MemoryMarshal.Write(frame.AsSpan(headerLength), in key);

        // The server adapter's own masking routine: the same XOR serves both directions.
        Masking.Apply(payload, frame.AsSpan(headerLength + 4), frame.AsSpan(headerLength, 4), position: 0);
        var data = frame.AsSpan(0, total);
        while (!data.IsEmpty)
        {
            data = data[socket.Send(data)..];
        }
    }
}
