namespace Broker.Core.Internal.Protocol;

/// <summary>Splits protocol arguments on whitespace into at most four spans, without allocating.</summary>
/// <remarks>
/// A byte loop rather than <c>IndexOfAny</c>: arguments are a few dozen bytes, where the vectorised search's setup
/// per token cost more than the scan itself (about 15% of a publish-heavy profile). Every separator is at or below
/// the space character, so a subject byte is rejected with a single comparison.
/// </remarks>
internal static class ArgumentSplitter
{
    /// <summary>
    /// Splits <paramref name="args"/> on spaces and tabs into <paramref name="parts"/> (leaf node LMSG lines, whose
    /// queue lists make the count open-ended). Returns the number of arguments found, which may exceed the room given.
    /// </summary>
    public static int Split(ReadOnlySpan<byte> args, Span<Range> parts)
    {
        var count = 0;
        var i = 0;
        while (true)
        {
            while (i < args.Length && IsSeparator(args[i], false))
            {
                i++;
            }

            if (i == args.Length)
            {
                return count;
            }

            var start = i;
            while (i < args.Length && !IsSeparator(args[i], false))
            {
                i++;
            }

            if (count < parts.Length)
            {
                parts[count] = start..i;
            }

            count++;
        }
    }

    /// <summary>
    /// Splits <paramref name="args"/> on spaces and tabs (and CR/LF for SUB/UNSUB, as nats-server's
    /// <c>splitArg</c>). Returns the number of arguments found, which may exceed four; only the first four are returned.
    /// </summary>
    public static int Split(
        ReadOnlySpan<byte> args,
        out ReadOnlySpan<byte> a0,
        out ReadOnlySpan<byte> a1,
        out ReadOnlySpan<byte> a2,
        out ReadOnlySpan<byte> a3,
        bool includeLineBreaks)
    {
        a0 = a1 = a2 = a3 = default;
        var count = 0;
        var i = 0;
        while (true)
        {
            while (i < args.Length && IsSeparator(args[i], includeLineBreaks))
            {
                i++;
            }

            if (i == args.Length)
            {
                return count;
            }

            var start = i;
            while (i < args.Length && !IsSeparator(args[i], includeLineBreaks))
            {
                i++;
            }

            var token = args[start..i];
            switch (count)
            {
                case 0: a0 = token; break;
                case 1: a1 = token; break;
                case 2: a2 = token; break;
                case 3: a3 = token; break;
            }

            count++;
        }
    }

    /// <summary>Skips leading spaces and tabs.</summary>
    public static ReadOnlySpan<byte> TrimStart(ReadOnlySpan<byte> args)
    {
        var i = 0;
        while (i < args.Length && (args[i] == (byte)' ' || args[i] == (byte)'\t'))
        {
            i++;
        }

        return args[i..];
    }

    private static bool IsSeparator(byte b, bool includeLineBreaks)
        => b <= (byte)' ' && (b == (byte)' ' || b == (byte)'\t' || (includeLineBreaks && (b == (byte)'\r' || b == (byte)'\n')));
}
