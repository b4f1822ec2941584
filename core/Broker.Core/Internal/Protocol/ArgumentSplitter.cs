using System.Runtime.CompilerServices;

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
    /// Splits <paramref name="args"/> on spaces and tabs (and CR/LF with <paramref name="includeLineBreaks"/>, for
    /// SUB/UNSUB, as nats-server's <c>splitArg</c>) into <paramref name="parts"/>. Returns the number of arguments found,
    /// which may exceed the room given (leaf node LMSG lines, whose queue lists make the count open-ended).
    /// </summary>
    public static int Split(ReadOnlySpan<byte> args, Span<Range> parts, bool includeLineBreaks = false)
    {
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

            if (count < parts.Length)
            {
                parts[count] = start..i;
            }

            count++;
        }
    }

    /// <summary>
    /// Splits <paramref name="args"/> as <see cref="Split(ReadOnlySpan{byte}, Span{Range}, bool)"/> does. Returns the
    /// number of arguments found, which may exceed four; only the first four are returned.
    /// </summary>
    public static int Split(
        ReadOnlySpan<byte> args,
        out ReadOnlySpan<byte> a0,
        out ReadOnlySpan<byte> a1,
        out ReadOnlySpan<byte> a2,
        out ReadOnlySpan<byte> a3,
        bool includeLineBreaks)
    {
        // One pass that hands out spans as it finds them: every PUB, HPUB, SUB and UNSUB comes through here, and a
        // table of ranges on the stack (with its stack cookie) then sliced again cost more than the scan itself.
        a1 = default;
        a2 = default;
        a3 = default;
        var i = 0;
        if (!Next(args, ref i, includeLineBreaks, out a0))
        {
            return 0;
        }

        if (!Next(args, ref i, includeLineBreaks, out a1))
        {
            return 1;
        }

        if (!Next(args, ref i, includeLineBreaks, out a2))
        {
            return 2;
        }

        if (!Next(args, ref i, includeLineBreaks, out a3))
        {
            return 3;
        }

        var count = 4;
        while (Next(args, ref i, includeLineBreaks, out _))
        {
            count++;
        }

        return count;
    }

    /// <summary>The argument starting at or after <paramref name="index"/>, which is moved past it; false when none is left.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static bool Next(ReadOnlySpan<byte> args, scoped ref int index, bool includeLineBreaks, out ReadOnlySpan<byte> argument)
    {
        var i = index;
        while (i < args.Length && IsSeparator(args[i], includeLineBreaks))
        {
            i++;
        }

        var start = i;
        while (i < args.Length && !IsSeparator(args[i], includeLineBreaks))
        {
            i++;
        }

        index = i;
        argument = args[start..i];
        return i > start;
    }

    /// <summary>Skips leading spaces and tabs.</summary>
    // Forced inline for the precompiled publish path (ArgumentSplitter.IsSeparator says why).
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static ReadOnlySpan<byte> TrimStart(ReadOnlySpan<byte> args)
    {
        var i = 0;
        while (i < args.Length && (args[i] == (byte)' ' || args[i] == (byte)'\t'))
        {
            i++;
        }

        return args[i..];
    }

    // Forced inline: crossgen2 left it a call per byte in the precompiled (ReadyToRun) Split, the code a fresh server's
    // first client runs before tier 1 replaces it; the small helpers of the publish path marked so are listed, with
    // the reason, in tests/Broker.Core.Tests/Protocol/HotPathInliningTests.cs (docs/benchmarks.md, "aggr1").
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static bool IsSeparator(byte b, bool includeLineBreaks)
        => b <= (byte)' ' && (b == (byte)' ' || b == (byte)'\t' || (includeLineBreaks && (b == (byte)'\r' || b == (byte)'\n')));
}
