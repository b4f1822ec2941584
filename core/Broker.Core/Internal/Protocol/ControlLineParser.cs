using System.Runtime.CompilerServices;

namespace Broker.Core.Internal.Protocol;

/// <summary>
/// Parses one complete control line (without its '\n') the way nats-server's <c>parser.go</c> and
/// <c>processPub</c>/<c>parseSub</c>/<c>processUnsub</c> do: case-insensitive operation names, spaces or tabs
/// between arguments, PING/PONG/+OK ignoring anything after the name.
/// </summary>
internal static class ControlLineParser
{
    private const int MaxSizeDigits = 9;

    public static ProtocolError Parse(ReadOnlySpan<byte> line, in ParserLimits limits, bool connectRequired, bool headersEnabled, out ControlLine result)
    {
        result = default;
        if (!line.IsEmpty && line[^1] == (byte)'\r')
        {
            line = line[..^1];
        }

        if (line.IsEmpty)
        {
            return connectRequired ? ProtocolError.AuthorizationViolation : ProtocolError.UnknownOperation;
        }

        var first = (byte)(line[0] | 0x20);
        if (connectRequired && first != (byte)'c')
        {
            return ProtocolError.AuthorizationViolation;
        }

        switch (first)
        {
            case (byte)'p':
                if (MatchesKeyword(line, "pub"u8))
                {
                    return ParsePub(line[3..], limits, ref result);
                }

                if (MatchesKeyword(line, "ping"u8))
                {
                    result.Op = ClientOp.Ping;
                    return ProtocolError.None;
                }

                if (MatchesKeyword(line, "pong"u8))
                {
                    result.Op = ClientOp.Pong;
                    return ProtocolError.None;
                }

                return ProtocolError.UnknownOperation;
            case (byte)'h':
                if (!MatchesKeyword(line, "hpub"u8))
                {
                    return ProtocolError.UnknownOperation;
                }

                return headersEnabled ? ParseHPub(line[4..], limits, ref result) : ProtocolError.HeadersNotSupported;
            case (byte)'s':
                return MatchesKeyword(line, "sub"u8) ? ParseSub(line[3..], limits, ref result) : ProtocolError.UnknownOperation;
            case (byte)'u':
                return MatchesKeyword(line, "unsub"u8) ? ParseUnsub(line[5..], limits, ref result) : ProtocolError.UnknownOperation;
            case (byte)'c':
                return MatchesKeyword(line, "connect"u8) ? ParseWholeArgument(ClientOp.Connect, line[7..], requireSpace: false, limits, ref result) : ProtocolError.UnknownOperation;
            case (byte)'i':
                return MatchesKeyword(line, "info"u8) ? ParseWholeArgument(ClientOp.Info, line[4..], requireSpace: false, limits, ref result) : ProtocolError.UnknownOperation;
            case (byte)'+':
                if (MatchesKeyword(line, "+ok"u8))
                {
                    result.Op = ClientOp.Ok;
                    return ProtocolError.None;
                }

                return ProtocolError.UnknownOperation;
            case (byte)'-':
                return MatchesKeyword(line, "-err"u8) ? ParseWholeArgument(ClientOp.Err, line[4..], requireSpace: true, limits, ref result) : ProtocolError.UnknownOperation;
            default:
                return ProtocolError.UnknownOperation;
        }
    }

    /// <summary>
    /// The error for a control line longer than max_control_line plus <see cref="ProtocolParser.ControlLineAllowance"/>,
    /// from its first bytes (<paramref name="start"/>, at least the allowance long): nats-server reads the operation
    /// name before it meets the limit, so an unknown operation, or anything but CONNECT before authentication, fails
    /// as such; a known one fails the limit.
    /// </summary>
    public static ProtocolError OverlongLineError(ReadOnlySpan<byte> start, bool connectRequired, bool headersEnabled)
    {
        var first = (byte)(start[0] | 0x20);
        if (connectRequired && first != (byte)'c')
        {
            return ProtocolError.AuthorizationViolation;
        }

        var known = first switch
        {
            (byte)'p' => MatchesKeywordAndSpace(start, "pub"u8) || MatchesKeyword(start, "ping"u8) || MatchesKeyword(start, "pong"u8),
            (byte)'h' => MatchesKeywordAndSpace(start, "hpub"u8),
            (byte)'s' => MatchesKeywordAndSpace(start, "sub"u8),
            (byte)'u' => MatchesKeywordAndSpace(start, "unsub"u8),
            (byte)'c' => MatchesKeyword(start, "connect"u8),
            (byte)'i' => MatchesKeyword(start, "info"u8),
            (byte)'+' => MatchesKeyword(start, "+ok"u8),
            (byte)'-' => MatchesKeywordAndSpace(start, "-err"u8),
            _ => false,
        };
        if (!known)
        {
            return ProtocolError.UnknownOperation;
        }

        return first == (byte)'h' && !headersEnabled ? ProtocolError.HeadersNotSupported : ProtocolError.MaxControlLineExceeded;
    }

    private static bool MatchesKeywordAndSpace(ReadOnlySpan<byte> line, ReadOnlySpan<byte> keyword)
        => MatchesKeyword(line, keyword) && line.Length > keyword.Length && line[keyword.Length] is (byte)' ' or (byte)'\t';

    /// <summary>nats-server's <c>parseSize</c>: up to 9 ASCII digits, otherwise -1.</summary>
    // Forced inline for the precompiled publish path (ArgumentSplitter.IsSeparator says why).
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static int ParseSize(ReadOnlySpan<byte> digits)
    {
        if (digits.IsEmpty || digits.Length > MaxSizeDigits)
        {
            return -1;
        }

        var value = 0;
        foreach (var digit in digits)
        {
            var d = digit - (byte)'0';
            if ((uint)d > 9)
            {
                return -1;
            }

            value = (value * 10) + d;
        }

        return value;
    }

    /// <summary>Case-insensitive prefix match of an operation name (lower-case ASCII in <paramref name="keyword"/>).</summary>
    // Forced inline for the precompiled publish path (ArgumentSplitter.IsSeparator says why).
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static bool MatchesKeyword(ReadOnlySpan<byte> line, ReadOnlySpan<byte> keyword)
    {
        if (line.Length < keyword.Length)
        {
            return false;
        }

        for (var i = 0; i < keyword.Length; i++)
        {
            var b = line[i];
            if (b != keyword[i] && (b | 0x20) != keyword[i])
            {
                return false;
            }
        }

        return true;
    }

    private static ProtocolError ParsePub(ReadOnlySpan<byte> rest, in ParserLimits limits, ref ControlLine result)
    {
        var error = TakeArguments(rest, requireSpace: true, limits.MaxControlLine, out var args);
        if (error != ProtocolError.None)
        {
            return error;
        }

        var count = ArgumentSplitter.Split(args, out var a0, out var a1, out var a2, out _, includeLineBreaks: false);
        ReadOnlySpan<byte> size;
        switch (count)
        {
            case 2:
                result.First = a0;
                size = a1;
                break;
            case 3:
                result.First = a0;
                result.Second = a1;
                size = a2;
                break;
            default:
                return ProtocolError.BadArguments;
        }

        result.Op = ClientOp.Pub;
        result.Size = ParseSize(size);
        if (result.Size < 0)
        {
            return ProtocolError.BadArguments;
        }

        return result.Size > limits.MaxPayload ? ProtocolError.MaxPayloadExceeded : ProtocolError.None;
    }

    private static ProtocolError ParseHPub(ReadOnlySpan<byte> rest, in ParserLimits limits, ref ControlLine result)
    {
        var error = TakeArguments(rest, requireSpace: true, limits.MaxControlLine, out var args);
        if (error != ProtocolError.None)
        {
            return error;
        }

        var count = ArgumentSplitter.Split(args, out var a0, out var a1, out var a2, out var a3, includeLineBreaks: false);
        ReadOnlySpan<byte> headerSize;
        ReadOnlySpan<byte> totalSize;
        switch (count)
        {
            case 3:
                result.First = a0;
                headerSize = a1;
                totalSize = a2;
                break;
            case 4:
                result.First = a0;
                result.Second = a1;
                headerSize = a2;
                totalSize = a3;
                break;
            default:
                return ProtocolError.BadArguments;
        }

        result.Op = ClientOp.HPub;
        result.HeaderSize = ParseSize(headerSize);
        result.Size = ParseSize(totalSize);
        if (result.HeaderSize < 0 || result.Size < 0 || result.HeaderSize > result.Size)
        {
            return ProtocolError.BadArguments;
        }

        return result.Size > limits.MaxPayload ? ProtocolError.MaxPayloadExceeded : ProtocolError.None;
    }

    private static ProtocolError ParseSub(ReadOnlySpan<byte> rest, in ParserLimits limits, ref ControlLine result)
    {
        var error = TakeArguments(rest, requireSpace: true, limits.MaxControlLine, out var args);
        if (error != ProtocolError.None)
        {
            return error;
        }

        var count = ArgumentSplitter.Split(args, out var a0, out var a1, out var a2, out _, includeLineBreaks: true);
        switch (count)
        {
            case 2:
                result.First = a0;
                result.Sid = a1;
                break;
            case 3:
                result.First = a0;
                result.Second = a1;
                result.Sid = a2;
                break;
            default:
                return ProtocolError.BadArguments;
        }

        result.Op = ClientOp.Sub;
        return ProtocolError.None;
    }

    private static ProtocolError ParseUnsub(ReadOnlySpan<byte> rest, in ParserLimits limits, ref ControlLine result)
    {
        var error = TakeArguments(rest, requireSpace: true, limits.MaxControlLine, out var args);
        if (error != ProtocolError.None)
        {
            return error;
        }

        var count = ArgumentSplitter.Split(args, out var a0, out var a1, out _, out _, includeLineBreaks: true);
        switch (count)
        {
            case 1:
                result.First = a0;
                result.Size = -1;
                break;
            case 2:
                result.First = a0;
                result.Size = ParseSize(a1);
                break;
            default:
                return ProtocolError.BadArguments;
        }

        result.Op = ClientOp.Unsub;
        return ProtocolError.None;
    }

    private static ProtocolError ParseWholeArgument(ClientOp op, ReadOnlySpan<byte> rest, bool requireSpace, in ParserLimits limits, ref ControlLine result)
    {
        var error = TakeArguments(rest, requireSpace, limits.MaxControlLine, out var arg);
        result.Op = op;
        result.First = arg;
        return error;
    }

    /// <summary>
    /// The arguments after an operation name: a space or tab must follow the name (when required), leading
    /// whitespace is skipped, and the arguments may not exceed max_control_line.
    /// </summary>
    // Forced inline for the precompiled publish path (ArgumentSplitter.IsSeparator says why).
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static ProtocolError TakeArguments(ReadOnlySpan<byte> rest, bool requireSpace, int maxControlLine, out ReadOnlySpan<byte> args)
    {
        args = default;
        if (requireSpace && (rest.IsEmpty || (rest[0] != (byte)' ' && rest[0] != (byte)'\t')))
        {
            return ProtocolError.UnknownOperation;
        }

        args = ArgumentSplitter.TrimStart(rest);
        return args.Length > maxControlLine ? ProtocolError.MaxControlLineExceeded : ProtocolError.None;
    }
}
