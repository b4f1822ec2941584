using System.Buffers;

namespace Broker.Adapters.Mqtt.Internal.Codec;

/// <summary>The outcome of <see cref="PacketFramer.TryReadHeader"/>.</summary>
internal enum FrameStatus
{
    /// <summary>The fixed header is complete; the body may still be incomplete.</summary>
    Header,

    /// <summary>More bytes are needed to read the fixed header.</summary>
    Incomplete,

    /// <summary>The remaining length is not a valid variable byte integer (a fifth length byte).</summary>
    Malformed,
}

/// <summary>
/// Splits the input into packets: the fixed header byte and the remaining length (a variable byte integer of at most
/// four bytes). The caller checks the length against its limit before waiting for the body, so an oversized packet
/// is refused as soon as its header arrives, without buffering it.
/// </summary>
internal static class PacketFramer
{
    /// <summary>The largest remaining length the encoding allows (268,435,455).</summary>
    public const int MaxRemainingLength = 0x0FFFFFFF;

    public static FrameStatus TryReadHeader(in ReadOnlySequence<byte> input, out byte header, out int remainingLength, out int headerLength)
    {
        header = 0;
        remainingLength = 0;
        headerLength = 0;
        var span = input.FirstSpan;
        if (span.Length < 5 && input.Length > span.Length)
        {
            // The header straddles segments (rare): read at most its five bytes into a local copy.
            Span<byte> local = stackalloc byte[5];
            var count = (int)Math.Min(5, input.Length);
            input.Slice(0, count).CopyTo(local);
            return Read(local[..count], out header, out remainingLength, out headerLength);
        }

        return Read(span, out header, out remainingLength, out headerLength);
    }

    private static FrameStatus Read(ReadOnlySpan<byte> span, out byte header, out int remainingLength, out int headerLength)
    {
        header = 0;
        remainingLength = 0;
        headerLength = 0;
        if (span.Length < 2)
        {
            return FrameStatus.Incomplete;
        }

        header = span[0];
        var value = 0;
        for (var i = 1; i <= 4; i++)
        {
            if (i >= span.Length)
            {
                return FrameStatus.Incomplete;
            }

            var b = span[i];
            value |= (b & 0x7F) << (7 * (i - 1));
            if ((b & 0x80) == 0)
            {
                remainingLength = value;
                headerLength = i + 1;
                return FrameStatus.Header;
            }
        }

        return FrameStatus.Malformed;
    }
}
