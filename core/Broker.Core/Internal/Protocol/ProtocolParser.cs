using System.Buffers;

namespace Broker.Core.Internal.Protocol;

/// <summary>
/// The NATS client protocol parser. It consumes whole operations from the connection's pipe buffer: the control
/// line is found with a vectorised search, payloads are handed on as slices of the buffer, and an operation that
/// is not complete yet is left unconsumed until more bytes arrive. That makes it correct at any split point and
/// copy-free except for a control line that straddles two buffer segments (copied into a scratch buffer).
/// </summary>
/// <remarks>
/// nats-server parses byte by byte with saved state because its read buffer is reused; a pipe keeps unconsumed
/// bytes for us, so we can re-read an incomplete operation instead of carrying parser state between reads.
/// </remarks>
internal static class ProtocolParser
{
    /// <summary>
    /// Bytes allowed beyond max_control_line for the operation name and separators while a line is incomplete;
    /// the exact argument limit is checked once the line is complete (nats-server is approximate here too).
    /// </summary>
    public const int ControlLineAllowance = 16;

    /// <summary>
    /// Parses and dispatches every complete operation in <paramref name="buffer"/>. On return the buffer starts at
    /// the first byte not consumed: the incomplete operation after <see cref="ParseStatus.NeedMoreData"/>, the
    /// operation after the one that stopped, or the offending operation after an error.
    /// </summary>
    public static ParseStatus Parse<TOps>(ref TOps ops, ref ReadOnlySequence<byte> buffer, in ParserLimits limits, byte[] scratch, out ProtocolError error)
        where TOps : struct, IProtocolOps
    {
        error = ProtocolError.None;
        while (!buffer.IsEmpty)
        {
            var status = ParseFirstSegment(ref ops, ref buffer, limits, ref error, out var stalled);
            if (status != ParseStatus.NeedMoreData)
            {
                return status;
            }

            if (stalled)
            {
                status = ParseStraddling(ref ops, ref buffer, limits, scratch, ref error, out var madeProgress);
                if (status != ParseStatus.NeedMoreData || !madeProgress)
                {
                    return status;
                }
            }
        }

        return ParseStatus.NeedMoreData;
    }

    /// <summary>
    /// The fast path: dispatches the operations that lie wholly in the first segment, then advances the buffer past
    /// them. <paramref name="stalled"/> is set when an operation runs past the segment (or is incomplete).
    /// </summary>
    private static ParseStatus ParseFirstSegment<TOps>(ref TOps ops, ref ReadOnlySequence<byte> buffer, in ParserLimits limits, ref ProtocolError error, out bool stalled)
        where TOps : struct, IProtocolOps
    {
        var memory = buffer.First;
        var span = memory.Span;
        var position = 0;
        stalled = false;
        var status = ParseStatus.NeedMoreData;
        while (position < span.Length)
        {
            var newline = span[position..].IndexOf((byte)'\n');
            if (newline < 0)
            {
                stalled = true;
                break;
            }

            if (newline > limits.MaxControlLine + ControlLineAllowance)
            {
                // The same limit the slow path applies before the newline arrives, so the outcome does not depend
                // on how the line was cut into reads.
                error = ControlLineParser.OverlongLineError(span.Slice(position, newline), ops.ConnectRequired, ops.HeadersEnabled);
                status = ParseStatus.Error;
                break;
            }

            error = ControlLineParser.Parse(span.Slice(position, newline), limits, ops.ConnectRequired, ops.HeadersEnabled, out var line);
            if (error != ProtocolError.None)
            {
                status = ParseStatus.Error;
                break;
            }

            var payloadStart = position + newline + 1;
            if (!line.HasPayload)
            {
                position = payloadStart;
                if (!Dispatch(ref ops, ref line))
                {
                    status = ParseStatus.Stopped;
                    break;
                }

                continue;
            }

            var end = payloadStart + line.Size + 2;
            if (end > span.Length)
            {
                // Fail on a wrong byte after the payload at once, as nats-server does, rather than waiting for two.
                var trailerStart = payloadStart + line.Size;
                if (trailerStart < span.Length && span[(int)trailerStart] != (byte)'\r')
                {
                    error = ProtocolError.UnknownOperation;
                    status = ParseStatus.Error;
                    break;
                }

                stalled = true;
                break;
            }

            if (span[(int)end - 2] != (byte)'\r' || span[(int)end - 1] != (byte)'\n')
            {
                error = ProtocolError.UnknownOperation;
                status = ParseStatus.Error;
                break;
            }

            var payload = new ReadOnlySequence<byte>(memory.Slice(payloadStart, (int)line.Size));
            position = (int)end;
            if (!DispatchMessage(ref ops, ref line, payload))
            {
                status = ParseStatus.Stopped;
                break;
            }
        }

        buffer = buffer.Slice(position);
        return status;
    }

    /// <summary>
    /// The slow path for one operation that straddles segments: copies its control line when split, slices its
    /// payload from the sequence, and reports whether it consumed anything.
    /// </summary>
    private static ParseStatus ParseStraddling<TOps>(ref TOps ops, ref ReadOnlySequence<byte> buffer, in ParserLimits limits, byte[] scratch, ref ProtocolError error, out bool madeProgress)
        where TOps : struct, IProtocolOps
    {
        madeProgress = false;
        var newline = buffer.PositionOf((byte)'\n');
        var lineLength = newline is { } end ? buffer.Slice(0, end).Length : buffer.Length;
        if (lineLength > limits.MaxControlLine + ControlLineAllowance)
        {
            // Refused before the rest is buffered; the operation name (its first bytes) decides the error, as in
            // nats-server, which reads the name before it meets the limit.
            Span<byte> name = stackalloc byte[ControlLineAllowance];
            buffer.Slice(0, ControlLineAllowance).CopyTo(name);
            error = ControlLineParser.OverlongLineError(name, ops.ConnectRequired, ops.HeadersEnabled);
            return ParseStatus.Error;
        }

        if (newline is null)
        {
            return ParseStatus.NeedMoreData;
        }

        var lineSequence = buffer.Slice(0, newline.Value);
        ReadOnlySpan<byte> lineSpan;
        if (lineSequence.IsSingleSegment)
        {
            lineSpan = lineSequence.FirstSpan;
        }
        else
        {
            // The scratch buffer holds max_control_line plus the allowance (checked above).
            lineSequence.CopyTo(scratch);
            lineSpan = scratch.AsSpan(0, (int)lineLength);
        }

        error = ControlLineParser.Parse(lineSpan, limits, ops.ConnectRequired, ops.HeadersEnabled, out var line);
        if (error != ProtocolError.None)
        {
            return ParseStatus.Error;
        }

        var frameStart = lineLength + 1;
        if (!line.HasPayload)
        {
            buffer = buffer.Slice(frameStart);
            madeProgress = true;
            return Dispatch(ref ops, ref line) ? ParseStatus.NeedMoreData : ParseStatus.Stopped;
        }

        var frameLength = frameStart + line.Size + 2;
        if (buffer.Length < frameLength)
        {
            if (buffer.Length > frameStart + line.Size && buffer.Slice(frameStart + line.Size).FirstSpan[0] != (byte)'\r')
            {
                error = ProtocolError.UnknownOperation;
                return ParseStatus.Error;
            }

            return ParseStatus.NeedMoreData;
        }

        Span<byte> trailer = stackalloc byte[2];
        buffer.Slice(frameStart + line.Size, 2).CopyTo(trailer);
        if (trailer[0] != (byte)'\r' || trailer[1] != (byte)'\n')
        {
            error = ProtocolError.UnknownOperation;
            return ParseStatus.Error;
        }

        var payload = buffer.Slice(frameStart, line.Size);
        var dispatched = DispatchMessage(ref ops, ref line, payload);
        buffer = buffer.Slice(frameLength);
        madeProgress = true;
        return dispatched ? ParseStatus.NeedMoreData : ParseStatus.Stopped;
    }

    private static bool Dispatch<TOps>(ref TOps ops, ref ControlLine line)
        where TOps : struct, IProtocolOps => line.Op switch
        {
            ClientOp.Sub => ops.OnSub(line.First, line.Second, line.Sid),
            ClientOp.Unsub => ops.OnUnsub(line.First, line.Size),
            ClientOp.Ping => ops.OnPing(),
            ClientOp.Pong => ops.OnPong(),
            ClientOp.Connect => ops.OnConnect(line.First),
            ClientOp.Err => ops.OnErr(line.First),

            // INFO and +OK from a client are ignored, as nats-server does.
            _ => true,
        };

    private static bool DispatchMessage<TOps>(ref TOps ops, ref ControlLine line, in ReadOnlySequence<byte> message)
        where TOps : struct, IProtocolOps
    {
        if (line.Op == ClientOp.Pub)
        {
            return ops.OnPub(line.First, line.Second, message);
        }

        var headers = message.Slice(0, line.HeaderSize);
        var payload = message.Slice(line.HeaderSize);
        return ops.OnHPub(line.First, line.Second, headers, payload);
    }
}
