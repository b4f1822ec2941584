using System.Buffers;
using System.Text;

namespace Broker.Core.Internal.Accounts;

/// <summary>
/// Whether a request's tracing headers ask for it to be sampled (accounts.go <c>shouldSample</c> past the rate):
/// <c>Uber-Trace-Id</c>'s flags, <c>X-B3-Sampled</c>, <c>X-B3-TraceId</c>, <c>B3</c>'s sampling token, or
/// <c>traceparent</c>'s <c>01</c> flags, in that order, keys compared without case as Go's canonical MIME keys are. The
/// decision reads the header block in place; only a sampled request gets the headers that triggered it, keyed by their
/// canonical names as the latency message's <c>header</c> shows them.
/// </summary>
internal static class TraceHeaders
{
    private static readonly string[] B3Keys = ["X-B3-Sampled", "X-B3-Traceid", "X-B3-Parentspanid", "X-B3-Spanid"];

    /// <summary>Decides for the request's header block; <paramref name="header"/> is set only when sampled.</summary>
    public static bool ShouldSample(in ReadOnlySequence<byte> headers, out SortedDictionary<string, List<string>>? header)
    {
        header = null;
        if (headers.IsSingleSegment)
        {
            return ShouldSample(headers.FirstSpan, ref header);
        }

        var length = (int)headers.Length;
        var rented = ArrayPool<byte>.Shared.Rent(length);
        try
        {
            headers.CopyTo(rented);
            return ShouldSample(rented.AsSpan(0, length), ref header);
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(rented);
        }
    }

    private static bool ShouldSample(ReadOnlySpan<byte> block, ref SortedDictionary<string, List<string>>? header)
    {
        if (First(block, "Uber-Trace-Id"u8) is { } uber)
        {
            // 479fefe9525eddb:5adb976bfc1f95c1:479fefe9525eddb:1: the flags' low bit, read as nats-server reads them
            // (a leading '0' and the flags' last character).
            var value = block.Slice(uber.Start, uber.Length);
            var parts = value.Count((byte)':');
            var flags = value[(value.LastIndexOf((byte)':') + 1)..];
            if (parts == 3 && flags.Length is 1 or 2 && HexValue(flags[^1]) is var low && low >= 0 && (low & 1) == 1)
            {
                header = Collect(block, static key => key.Equals("Uber-Trace-Id", StringComparison.Ordinal) || key.StartsWith("Uberctx-", StringComparison.Ordinal));
                return true;
            }

            return false;
        }

        var sampled = First(block, "X-B3-Sampled"u8);
        if (sampled is { } s && block.Slice(s.Start, s.Length).SequenceEqual("1"u8))
        {
            header = Collect(block, static key => Array.IndexOf(B3Keys, key) >= 0);
            return true;
        }

        if (sampled is { } denied && block.Slice(denied.Start, denied.Length).SequenceEqual("0"u8))
        {
            return false;
        }

        if (First(block, "X-B3-TraceId"u8) is not null)
        {
            header = Collect(block, static key => Array.IndexOf(B3Keys, key) >= 0);
            return true;
        }

        if (First(block, "B3"u8) is { } b3)
        {
            // 80f198ee56343ba864fe8b2a57d3eff7-e457b5a2e4d86bd1-1-05e3ac9a4f6e3b90, or 0: denied by a 0 sampling token.
            var value = block.Slice(b3.Start, b3.Length);
            if (Token(value, (byte)'-', 2, out var third) && third.SequenceEqual("0"u8))
            {
                return false;
            }

            if (value.SequenceEqual("0"u8))
            {
                return false;
            }

            header = Collect(block, static key => key.Equals("B3", StringComparison.Ordinal));
            return true;
        }

        if (First(block, "Traceparent"u8) is { } parent)
        {
            // 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01
            var value = block.Slice(parent.Start, parent.Length);
            if (value.Count((byte)'-') == 3 && Token(value, (byte)'-', 3, out var flags) && flags.SequenceEqual("01"u8))
            {
                header = Collect(block, static key => key.Equals("Traceparent", StringComparison.Ordinal) || key.Equals("Tracestate", StringComparison.Ordinal));
                return true;
            }
        }

        return false;
    }

    // The first value of a key (case-insensitive), as its offset and length in the block.
    private static (int Start, int Length)? First(ReadOnlySpan<byte> block, ReadOnlySpan<byte> name)
    {
        var first = true;
        foreach (var range in block.Split("\r\n"u8))
        {
            var line = block[range];
            var start = range.Start.GetOffset(block.Length);
            if (first)
            {
                // The status line.
                first = false;
                continue;
            }

            var colon = line.IndexOf((byte)':');
            if (colon > 0 && Ascii.EqualsIgnoreCase(line[..colon], name))
            {
                var value = line[(colon + 1)..];
                var trimmedStart = value.Length - value.TrimStart(" \t"u8).Length;
                value = value.Trim(" \t"u8);
                return (start + colon + 1 + trimmedStart, value.Length);
            }
        }

        return null;
    }

    // The index-th token of a value split by a separator.
    private static bool Token(ReadOnlySpan<byte> value, byte separator, int index, out ReadOnlySpan<byte> token)
    {
        var i = 0;
        foreach (var range in value.Split(separator))
        {
            if (i++ == index)
            {
                token = value[range];
                return true;
            }
        }

        token = default;
        return false;
    }

    private static int HexValue(byte c) => c switch
    {
        >= (byte)'0' and <= (byte)'9' => c - '0',
        >= (byte)'a' and <= (byte)'f' => c - 'a' + 10,
        >= (byte)'A' and <= (byte)'F' => c - 'A' + 10,
        _ => -1,
    };

    // Every value of the keys chosen by their canonical name (a sampled request only).
    private static SortedDictionary<string, List<string>> Collect(ReadOnlySpan<byte> block, Func<string, bool> wanted)
    {
        var result = new SortedDictionary<string, List<string>>(StringComparer.Ordinal);
        var first = true;
        foreach (var range in block.Split("\r\n"u8))
        {
            var line = block[range];
            if (first)
            {
                first = false;
                continue;
            }

            var colon = line.IndexOf((byte)':');
            if (colon <= 0)
            {
                continue;
            }

            var key = Canonical(Encoding.ASCII.GetString(line[..colon]));
            if (wanted(key))
            {
                var value = Encoding.UTF8.GetString(line[(colon + 1)..].Trim(" \t"u8));
                if (!result.TryGetValue(key, out var values))
                {
                    result[key] = values = [];
                }

                values.Add(value);
            }
        }

        return result;
    }

    // Go's textproto.CanonicalMIMEHeaderKey: upper case first and after '-', lower case elsewhere.
    private static string Canonical(string key) => string.Create(key.Length, key, static (chars, source) =>
    {
        var upper = true;
        for (var i = 0; i < source.Length; i++)
        {
            var c = source[i];
            chars[i] = upper ? char.ToUpperInvariant(c) : char.ToLowerInvariant(c);
            upper = c == '-';
        }
    });
}
