using System.Buffers.Text;
using System.Text;

namespace Broker.JetStream.Internal.Streams;

/// <summary>
/// What a mirror or source reads of the messages it takes in: the origin consumer's ack reply (nats-server
/// <c>replyInfo</c>) and the <c>Nats-Stream-Source</c> header (<c>streamAndSeq</c>, <c>removeHeaderIfPresent</c>).
/// </summary>
internal static class SourceMessages
{
    /// <summary>The header naming where a sourced message came from.</summary>
    public static ReadOnlySpan<byte> StreamSourceHeader => "Nats-Stream-Source"u8;

    /// <summary>nats-server <c>streamAndSeq</c>: <c>&lt;iname&gt; &lt;seq&gt;</c>, or the older form, an ack reply subject.</summary>
    public static bool TryParseSourceHeader(ReadOnlySpan<byte> value, out string name, out ulong sequence)
    {
        name = "";
        sequence = 0;
        if (value.StartsWith("$JS.ACK."u8))
        {
            if (!TryParseAckReply(value, out var stream, out _, out _, out sequence, out _, out _, out _, out _))
            {
                return false;
            }

            name = Encoding.UTF8.GetString(stream);
            return true;
        }

        var space = value.IndexOf((byte)' ');
        if (space <= 0 || value[(space + 1)..].IndexOf((byte)' ') >= 0)
        {
            return false;
        }

        name = Encoding.UTF8.GetString(value[..space]);
        return Utf8Parser.TryParse(value[(space + 1)..], out sequence, out var consumed) && consumed == value.Length - space - 1;
    }

    /// <summary>nats-server <c>removeHeaderIfPresent</c> for <c>Nats-Stream-Source</c> (a stream sourcing a sourcing stream).</summary>
    public static ReadOnlySpan<byte> StripSourceHeader(ReadOnlySpan<byte> block, ref byte[]? scratch)
    {
        var at = block.IndexOf("\nNats-Stream-Source:"u8);
        if (at < 0)
        {
            return block;
        }

        var start = at + 1;
        var end = block[start..].IndexOf("\r\n"u8);
        if (end < 0)
        {
            return block;
        }

        var length = block.Length - end - 2;
        if (length <= "NATS/1.0\r\n\r\n".Length)
        {
            return default;
        }

        if (scratch is null || scratch.Length < length)
        {
            scratch = new byte[Math.Max(length, 256)];
        }

        block[..start].CopyTo(scratch);
        block[(start + end + 2)..].CopyTo(scratch.AsSpan(start));
        return scratch.AsSpan(0, length);
    }

    /// <summary>
    /// Reads nats-server's ack reply (<c>replyInfo</c>): the origin stream and consumer, the delivery count, the stream
    /// sequence (and its text), the delivery sequence, the message's store time in the origin (Unix nanoseconds; 0 when
    /// unreadable) and the pending count.
    /// </summary>
    public static bool TryParseAckReply(ReadOnlySpan<byte> reply, out ReadOnlySpan<byte> stream, out ReadOnlySpan<byte> consumer, out ulong deliveryCount, out ulong sseq, out ReadOnlySpan<byte> sseqText, out ulong dseq, out long timestamp, out ulong pending)
    {
        stream = consumer = sseqText = default;
        deliveryCount = sseq = dseq = pending = 0;
        timestamp = 0;
        Span<Range> tokens = stackalloc Range[9];
        var count = 0;
        var start = 0;
        for (var i = 0; i <= reply.Length; i++)
        {
            if (i < reply.Length && reply[i] != (byte)'.')
            {
                continue;
            }

            if (count == tokens.Length)
            {
                return false;
            }

            tokens[count++] = new Range(start, i);
            start = i + 1;
        }

        if (count != 9 || !reply[tokens[0]].SequenceEqual("$JS"u8) || !reply[tokens[1]].SequenceEqual("ACK"u8))
        {
            return false;
        }

        stream = reply[tokens[2]];
        consumer = reply[tokens[3]];
        sseqText = reply[tokens[5]];
        if (!Utf8Parser.TryParse(reply[tokens[7]], out timestamp, out var timeLength) || timeLength != reply[tokens[7]].Length || timestamp < 0)
        {
            timestamp = 0;
        }

        return sseqText.Length <= 20
            && Utf8Parser.TryParse(reply[tokens[4]], out deliveryCount, out _)
            && Utf8Parser.TryParse(sseqText, out sseq, out var consumed) && consumed == sseqText.Length
            && Utf8Parser.TryParse(reply[tokens[6]], out dseq, out _)
            && Utf8Parser.TryParse(reply[tokens[8]], out pending, out _);
    }
}
