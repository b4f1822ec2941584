using System.Buffers;
using System.Buffers.Text;

namespace Broker.Abstractions;

/// <summary>
/// Reading a NATS header block (<c>NATS/1.0[ status[ description]]\r\nName: value\r\n...\r\n\r\n</c>, the
/// <c>headers</c> of <see cref="BusMessage"/> and of every publish) in place, without parsing it into objects.
/// Names compare case-sensitively, as nats-server's own lookups do.
/// </summary>
public static class NatsHeaderBlock
{
    private const int StatusLineLength = 12; // "NATS/1.0 503"

    /// <summary>The status code of the block's first line (<c>NATS/1.0 503</c> is 503), or 0 when it has none.</summary>
    /// <param name="block">The header block.</param>
    /// <returns>The three-digit status, or 0.</returns>
    public static int StatusCode(ReadOnlySpan<byte> block) =>
        block.Length >= StatusLineLength && block.StartsWith("NATS/1.0 "u8)
            && Utf8Parser.TryParse(block.Slice(9, 3), out int code, out var consumed) && consumed == 3 ? code : 0;

    /// <summary>The status code of the block's first line, or 0 when it has none; reads only the first 12 bytes.</summary>
    /// <param name="block">The header block, possibly in segments.</param>
    /// <returns>The three-digit status, or 0.</returns>
    public static int StatusCode(in ReadOnlySequence<byte> block)
    {
        if (block.FirstSpan.Length >= StatusLineLength || block.Length < StatusLineLength)
        {
            return StatusCode(block.FirstSpan);
        }

        Span<byte> start = stackalloc byte[StatusLineLength];
        block.Slice(0, StatusLineLength).CopyTo(start);
        return StatusCode(start);
    }

    /// <summary>
    /// Whether a message is the server's "no responders" status (<c>NATS/1.0 503</c>), which answers a request nobody
    /// subscribed to and is not a reply.
    /// </summary>
    /// <param name="block">The message's header block.</param>
    /// <returns><see langword="true"/> for status 503.</returns>
    public static bool IsNoResponders(in ReadOnlySequence<byte> block) => StatusCode(block) == 503;

    /// <summary>The value of the first header called <paramref name="name"/>, spaces around it trimmed.</summary>
    /// <param name="block">The header block.</param>
    /// <param name="name">The header name, compared case-sensitively.</param>
    /// <param name="value">The value, a slice of <paramref name="block"/>.</param>
    /// <returns><see langword="false"/> when the block has no such header.</returns>
    public static bool TryGetValue(ReadOnlySpan<byte> block, ReadOnlySpan<byte> name, out ReadOnlySpan<byte> value)
    {
        var reader = new NatsHeaderReader(block);
        while (reader.TryRead(out var current, out value))
        {
            if (current.SequenceEqual(name))
            {
                value = value.TrimEnd((byte)' ');
                return true;
            }
        }

        value = default;
        return false;
    }
}
