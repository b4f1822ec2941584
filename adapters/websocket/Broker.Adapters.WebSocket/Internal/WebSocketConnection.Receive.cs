using System.Buffers;
using System.Buffers.Binary;
using System.IO.Pipelines;
using System.Text;

namespace Broker.Adapters.WebSocket.Internal;

/// <summary>
/// The receive loop: decodes the client's frames as nats-server's <c>wsReadLoop</c> does. Data frame payloads are
/// unmasked straight into the protocol's input pipe (compressed messages are gathered and inflated when complete);
/// control frames are answered here. A framing error sends a close frame with 1002 (1009 for a message over the
/// size limit) and ends the input, so the protocol closes the connection; nothing already decoded is lost.
/// </summary>
internal sealed partial class WebSocketConnection
{
    private static readonly UTF8Encoding StrictUtf8 = new(encoderShouldEmitUTF8Identifier: false, throwOnInvalidBytes: true);

    private readonly byte[] maskKey = new byte[4];
    private long payloadRemaining;
    private int maskPosition;
    private bool inFrame;
    private bool messageOpen;
    private bool messageCompressed;
    private bool frameFinal;
    private long messageLength;
    private MemoryStream? compressedMessage;

    private enum Step
    {
        NeedMore,
        Stop,
    }

    private async Task ReceiveAsync()
    {
        var reader = inner.Transport.Input;
        var writer = input.Writer;
        try
        {
            while (true)
            {
                var result = await reader.ReadAsync().ConfigureAwait(false);
                var buffer = result.Buffer;
                var step = Decode(ref buffer, writer);
                reader.AdvanceTo(buffer.Start, buffer.End);
                var flush = await writer.FlushAsync().ConfigureAwait(false);
                if (step == Step.Stop || flush.IsCompleted || flush.IsCanceled || result.IsCompleted || result.IsCanceled)
                {
                    break;
                }
            }
        }
        catch (Exception ex) when (ex is IOException or InvalidOperationException or ObjectDisposedException)
        {
        }
        finally
        {
            // The protocol sees the end of its input and closes; the inner transport may drain what still comes.
            await writer.CompleteAsync().ConfigureAwait(false);
            await reader.CompleteAsync().ConfigureAwait(false);
        }
    }

    private Step Decode(ref ReadOnlySequence<byte> buffer, PipeWriter writer)
    {
        while (true)
        {
            if (!inFrame)
            {
                var header = ReadHeader(ref buffer, writer);
                if (header is not null)
                {
                    return header.Value;
                }

                continue;
            }

            if (payloadRemaining > 0)
            {
                if (buffer.IsEmpty)
                {
                    return Step.NeedMore;
                }

                var chunk = buffer.Slice(0, Math.Min(buffer.Length, payloadRemaining));
                buffer = buffer.Slice(chunk.End);
                payloadRemaining -= chunk.Length;
                if (messageCompressed)
                {
                    compressedMessage ??= new MemoryStream();
                    foreach (var segment in chunk)
                    {
                        var start = (int)compressedMessage.Length;
                        compressedMessage.Write(segment.Span);
                        Unmask(compressedMessage.GetBuffer().AsSpan(start, segment.Length));
                    }
                }
                else
                {
                    CopyUnmasked(chunk, writer);
                }
            }

            if (payloadRemaining == 0)
            {
                inFrame = false;
                if (messageCompressed && frameFinal && !FinishCompressedMessage(writer))
                {
                    return Step.Stop;
                }
            }
        }
    }

    /// <summary>Reads one frame header; returns a step to stop at, or <see langword="null"/> to continue.</summary>
    private Step? ReadHeader(ref ReadOnlySequence<byte> buffer, PipeWriter writer)
    {
        var reader = new SequenceReader<byte>(buffer);
        if (!reader.TryRead(out var b0) || !reader.TryRead(out var b1))
        {
            return Step.NeedMore;
        }

        var final = (b0 & Frames.FinalBit) != 0;
        var compressed = (b0 & Frames.CompressedBit) != 0;
        var opcode = (byte)(b0 & 0x0F);
        if ((b0 & Frames.ReservedBits) != 0)
        {
            return Fail(Frames.ProtocolError, "RSV2 and RSV3 must be clear");
        }

        if (compressed && !compression)
        {
            return Fail(Frames.ProtocolError, "compressed frame received without negotiated permessage-deflate");
        }

        if ((b1 & Frames.MaskBit) == 0)
        {
            return Fail(Frames.ProtocolError, "mask bit missing");
        }

        long length = b1 & 0x7F;
        var control = opcode >= Frames.Close;
        switch (opcode)
        {
            case Frames.Close or Frames.Ping or Frames.Pong:
                if (length > Frames.MaxControlPayload)
                {
                    return Fail(Frames.ProtocolError, $"control frame length bigger than maximum allowed of {Frames.MaxControlPayload} bytes");
                }

                if (!final)
                {
                    return Fail(Frames.ProtocolError, "control frame does not have final bit set");
                }

                if (compressed)
                {
                    return Fail(Frames.ProtocolError, "control frame must not be compressed");
                }

                break;
            case Frames.Text or Frames.Binary:
                if (messageOpen)
                {
                    return Fail(Frames.ProtocolError, "new message started before final frame for previous message was received");
                }

                break;
            case Frames.Continuation:
                if (!messageOpen || compressed)
                {
                    return Fail(Frames.ProtocolError, "invalid continuation frame");
                }

                break;
            default:
                return Fail(Frames.ProtocolError, $"unknown opcode {opcode}");
        }

        if (length == 126)
        {
            if (!reader.TryReadBigEndian(out short extended))
            {
                return Step.NeedMore;
            }

            length = (ushort)extended;
        }
        else if (length == 127)
        {
            if (!reader.TryReadBigEndian(out long extended))
            {
                return Step.NeedMore;
            }

            if (extended < 0)
            {
                return Fail(Frames.ProtocolError, "invalid 64-bit payload length");
            }

            length = extended;
        }

        if (reader.Remaining < 4 || (control && reader.Remaining < 4 + length))
        {
            // Control frames are handled whole; wait for all of one.
            return Step.NeedMore;
        }

        reader.TryCopyTo(maskKey);
        reader.Advance(4);
        maskPosition = 0;
        if (control)
        {
            var payload = reader.UnreadSequence.Slice(0, length).ToArray();
            reader.Advance(length);
            buffer = buffer.Slice(reader.Position);
            Unmask(payload);
            return HandleControl(opcode, payload);
        }

        buffer = buffer.Slice(reader.Position);
        if (opcode != Frames.Continuation)
        {
            messageCompressed = compressed;
            messageLength = 0;
        }

        messageOpen = !final;
        frameFinal = final;
        messageLength += length;
        if (messageLength > maxMessageSize)
        {
            return Fail(Frames.MessageTooBig, "maximum message size exceeded");
        }

        payloadRemaining = length;
        inFrame = true;
        return null;
    }

    private Step? HandleControl(byte opcode, byte[] payload)
    {
        switch (opcode)
        {
            case Frames.Ping:
                SendPong(Frames.Control(Frames.Pong, payload));
                return null;
            case Frames.Pong:
                return null;
        }

        // Close: echo the status (RFC 6455 5.5.1), then end the session.
        if (payload.Length == 1)
        {
            return Fail(Frames.ProtocolError, "close frame payload cannot be 1 byte");
        }

        if (payload.Length == 0)
        {
            Volatile.Write(ref closeFrame, Frames.Control(Frames.Close, []));
            return Step.Stop;
        }

        var status = BinaryPrimitives.ReadUInt16BigEndian(payload);
        if (!Frames.IsValidCloseStatus(status))
        {
            return Fail(Frames.ProtocolError, $"invalid close status code {status}");
        }

        string body;
        try
        {
            body = StrictUtf8.GetString(payload, 2, payload.Length - 2);
        }
        catch (DecoderFallbackException)
        {
            Volatile.Write(ref closeFrame, Frames.CloseFrame(Frames.InvalidPayloadData, "invalid utf8 body in close frame"));
            return Step.Stop;
        }

        Volatile.Write(ref closeFrame, Frames.CloseFrame(status, body));
        return Step.Stop;
    }

    private bool FinishCompressedMessage(PipeWriter writer)
    {
        var message = compressedMessage ?? new MemoryStream();
        var inflated = Frames.Inflate(message, writer, maxMessageSize);
        if (inflated && message.Capacity <= Frames.KeptScratchCapacity)
        {
            // Kept for the next compressed message, emptied: steady traffic allocates no buffer.
            message.SetLength(0);
            compressedMessage = message;
            return true;
        }

        compressedMessage = null;
        message.Dispose();
        if (inflated)
        {
            return true;
        }

        Fail(Frames.MessageTooBig, "decompressed message too big or not valid");
        return false;
    }

    private Step Fail(ushort status, string reason)
    {
        WebSocketLog.ProtocolError(logger, RemoteName, reason);
        Volatile.Write(ref closeFrame, Frames.CloseFrame(status, reason));
        return Step.Stop;
    }

    private void CopyUnmasked(in ReadOnlySequence<byte> chunk, PipeWriter writer)
    {
        foreach (var segment in chunk)
        {
            var source = segment.Span;
            while (!source.IsEmpty)
            {
                var target = writer.GetSpan(1);
                var count = Math.Min(target.Length, source.Length);
                maskPosition = Masking.Apply(source[..count], target, maskKey, maskPosition);
                writer.Advance(count);
                source = source[count..];
            }
        }
    }

    private void Unmask(Span<byte> data) => maskPosition = Masking.Apply(data, data, maskKey, maskPosition);
}
