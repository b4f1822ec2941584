namespace Broker.Core.Internal.Protocol;

/// <summary>Splits protocol arguments on whitespace into at most four spans, without allocating.</summary>
internal static class ArgumentSplitter
{
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
        var separators = includeLineBreaks ? " \t\r\n"u8 : " \t"u8;
        var count = 0;
        while (true)
        {
            var start = args.IndexOfAnyExcept(separators);
            if (start < 0)
            {
                return count;
            }

            args = args[start..];
            var end = args.IndexOfAny(separators);
            var token = end < 0 ? args : args[..end];
            switch (count)
            {
                case 0: a0 = token; break;
                case 1: a1 = token; break;
                case 2: a2 = token; break;
                case 3: a3 = token; break;
            }

            count++;
            if (end < 0)
            {
                return count;
            }

            args = args[end..];
        }
    }
}
