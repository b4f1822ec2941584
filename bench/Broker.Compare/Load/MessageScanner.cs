using System.Runtime.CompilerServices;

namespace Broker.Compare.Load;

/// <summary>What a <see cref="MessageScanner"/> reports. A struct implementation lets the JIT inline the calls.</summary>
internal interface IScanHandler
{
    /// <summary>Whether <see cref="OnMessage"/> needs the payload; when false, payloads are skipped without copying.</summary>
    bool WantsPayload { get; }

    /// <summary>A MSG (or HMSG, then <paramref name="payload"/> includes the header block) frame.</summary>
    /// <param name="replyTo">The reply subject, or empty.</param>
    /// <param name="size">The payload size the frame declared.</param>
    /// <param name="payload">The payload when <see cref="WantsPayload"/>, else empty.</param>
    void OnMessage(ReadOnlySpan<byte> replyTo, int size, ReadOnlySpan<byte> payload);

    void OnPing();

    void OnPong();
}

/// <summary>
/// A streaming parser for what a NATS server sends a client, fast enough that counting MSG frames never limits a
/// benchmark: it finds each control line with a vectorised search, takes the size from the last token, and skips
/// payloads by length. Frames may be split anywhere across reads; a partial control line is carried over and a
/// split payload is copied only when the handler wants it. <c>-ERR</c> and unknown lines throw. The hot methods skip
/// tiered compilation, so the load generator runs at full speed from its first run (tier 0 code counts frames
/// several times slower and would make the first runs measure the generator instead of the server).
/// </summary>
internal sealed class MessageScanner
{
    private const int MaxLine = 4096 + 64;

    private readonly byte[] line = new byte[MaxLine];
    private readonly byte[] payload = new byte[64 * 1024];
    private int lineLength;

    // While inside a payload: bytes still to come including the trailing CRLF, and the frame it belongs to.
    private int remaining;
    private int pendingSize;
    private int pendingReplyStart;
    private int pendingReplyLength;

    /// <summary>Forgets any partial frame (reusing the scanner for another connection).</summary>
    public void Reset()
    {
        lineLength = 0;
        remaining = 0;
    }

    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    public void Feed<THandler>(ReadOnlySpan<byte> data, ref THandler handler)
        where THandler : struct, IScanHandler
    {
        var i = 0;
        while (i < data.Length)
        {
            if (remaining > 0)
            {
                i += ContinuePayload(data[i..], ref handler);
                continue;
            }

            var rest = data[i..];
            var newline = rest.IndexOf((byte)'\n');
            if (newline < 0)
            {
                Append(rest);
                return;
            }

            ReadOnlySpan<byte> control;
            if (lineLength > 0)
            {
                Append(rest[..(newline + 1)]);
                control = line.AsSpan(0, lineLength);
            }
            else
            {
                control = rest[..(newline + 1)];
            }

            i += newline + 1;
            lineLength = 0;
            if (control.Length < 2 || control[^2] != (byte)'\r')
            {
                throw Unexpected(control);
            }

            control = control[..^2];
            if (control.StartsWith("MSG "u8) || control.StartsWith("HMSG "u8))
            {
                i += BeginMessage(control, data[i..], ref handler);
            }
            else if (control.SequenceEqual("PING"u8))
            {
                handler.OnPing();
            }
            else if (control.SequenceEqual("PONG"u8))
            {
                handler.OnPong();
            }
            else if (control.SequenceEqual("+OK"u8) || control.StartsWith("INFO "u8))
            {
                // Verbose acknowledgements and asynchronous INFO updates carry nothing a benchmark needs.
            }
            else
            {
                throw Unexpected(control);
            }
        }
    }

    /// <summary>Handles a MSG line; returns how many bytes of <paramref name="after"/> it consumed.</summary>
    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    private int BeginMessage<THandler>(ReadOnlySpan<byte> control, ReadOnlySpan<byte> after, ref THandler handler)
        where THandler : struct, IScanHandler
    {
        var lastSpace = control.LastIndexOf((byte)' ');
        var size = ParseSize(control[(lastSpace + 1)..], control);
        var isHeaders = control[0] == (byte)'H';

        // MSG <subject> <sid> [reply] <size>; HMSG <subject> <sid> [reply] <header size> <total size>.
        var argumentsStart = isHeaders ? 5 : 4;
        var arguments = control[argumentsStart..lastSpace];
        var reply = ReadOnlySpan<byte>.Empty;
        var replyStart = 0;

        // Only handlers that answer (services) need the reply subject; counting skips the token walk.
        if (handler.WantsPayload && arguments.Count((byte)' ') + 1 == (isHeaders ? 4 : 3))
        {
            var afterSubject = arguments[(arguments.IndexOf((byte)' ') + 1)..];
            var afterSid = afterSubject[(afterSubject.IndexOf((byte)' ') + 1)..];
            var end = afterSid.IndexOf((byte)' ');
            reply = end < 0 ? afterSid : afterSid[..end];
            replyStart = argumentsStart + arguments.Length - afterSid.Length;
        }

        if (after.Length >= size + 2)
        {
            handler.OnMessage(reply, size, handler.WantsPayload ? after[..size] : default);
            return size + 2;
        }

        // The payload continues in a later read: keep the reply subject beside the partial payload.
        pendingSize = size;
        remaining = size + 2;
        pendingReplyLength = reply.Length;
        pendingReplyStart = 0;
        if (!reply.IsEmpty)
        {
            control.Slice(replyStart, reply.Length).CopyTo(line);
        }

        return ContinuePayload(after, ref handler);
    }

    /// <summary>Consumes payload bytes of the pending frame; returns how many it took.</summary>
    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    private int ContinuePayload<THandler>(ReadOnlySpan<byte> data, ref THandler handler)
        where THandler : struct, IScanHandler
    {
        var take = Math.Min(remaining, data.Length);
        if (handler.WantsPayload)
        {
            var offset = pendingSize + 2 - remaining;
            var copy = Math.Min(take, Math.Max(pendingSize - offset, 0));
            if (copy > 0)
            {
                EnsurePayloadCapacity(pendingSize);
                data[..copy].CopyTo(payload.AsSpan(offset));
            }
        }

        remaining -= take;
        if (remaining == 0)
        {
            var reply = line.AsSpan(pendingReplyStart, pendingReplyLength);
            handler.OnMessage(reply, pendingSize, handler.WantsPayload ? payload.AsSpan(0, pendingSize) : default);
        }

        return take;
    }

    private void EnsurePayloadCapacity(int size)
    {
        if (size > payload.Length)
        {
            throw new InvalidOperationException($"A {size}-byte payload is larger than the load generator keeps ({payload.Length}).");
        }
    }

    private void Append(ReadOnlySpan<byte> bytes)
    {
        if (lineLength + bytes.Length > line.Length)
        {
            throw new InvalidOperationException("The server sent a control line longer than 4 KiB.");
        }

        bytes.CopyTo(line.AsSpan(lineLength));
        lineLength += bytes.Length;
    }

    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    private static int ParseSize(ReadOnlySpan<byte> digits, ReadOnlySpan<byte> control)
    {
        if (digits.IsEmpty)
        {
            throw Unexpected(control);
        }

        var value = 0;
        foreach (var digit in digits)
        {
            var d = digit - '0';
            if ((uint)d > 9)
            {
                throw Unexpected(control);
            }

            value = (value * 10) + d;
        }

        return value;
    }

    private static InvalidOperationException Unexpected(ReadOnlySpan<byte> control)
    {
        var text = System.Text.Encoding.ASCII.GetString(control[..Math.Min(control.Length, 200)]).TrimEnd();
        return new InvalidOperationException(text.StartsWith("-ERR", StringComparison.Ordinal)
            ? $"The server sent {text}"
            : $"The server sent an unexpected line: '{text}'");
    }
}
