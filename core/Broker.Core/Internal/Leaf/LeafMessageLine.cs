using System.Buffers.Text;
using System.Text;

namespace Broker.Core.Internal.Leaf;

/// <summary>
/// The arguments of an LMSG or HMSG line, as ranges of the line (nats-server's <c>processLeafMsgArgs</c> and
/// <c>processLeafHeaderMsgArgs</c>): the subject, the reply, the queue names the message is for, the sizes.
/// </summary>
internal readonly record struct LeafMessageLine(Range Subject, Range Reply, Range Queues, int HeaderSize, int Size)
{
    // LMSG <subject> [reply] <size> | <subject> + <reply> <queues...> <size> | <subject> | <queues...> <size>; HMSG adds <hdr> before <size>.
    public static LeafMessageLine Parse(ReadOnlySpan<byte> args, bool withHeaders)
    {
        Span<Range> parts = stackalloc Range[64];
        var count = Protocol.ArgumentSplitter.Split(args, parts);
        var sizes = withHeaders ? 2 : 1;
        if (count < 1 + sizes || count > parts.Length)
        {
            throw new LeafProtocolException("Parse Error: '" + Encoding.UTF8.GetString(args) + "'");
        }

        var size = ParseSize(args[parts[count - 1]]);
        var header = withHeaders ? ParseSize(args[parts[count - 2]]) : 0;
        if (header > size)
        {
            throw new LeafProtocolException("Header Size larger then TotalSize");
        }

        var rest = count - sizes;
        Range reply = default;
        Range queues = default;
        if (rest == 2)
        {
            reply = parts[1];
        }
        else if (rest > 2)
        {
            var indicator = args[parts[1]];
            if (indicator.SequenceEqual("+"u8))
            {
                reply = parts[2];
                queues = rest > 3 ? parts[3].Start..parts[rest - 1].End : default;
            }
            else if (indicator.SequenceEqual("|"u8))
            {
                queues = parts[2].Start..parts[rest - 1].End;
            }
            else
            {
                throw new LeafProtocolException("Bad or Missing Reply Indicator: '" + Encoding.UTF8.GetString(indicator) + "'");
            }
        }

        return new LeafMessageLine(parts[0], reply, queues, header, size);
    }

    private static int ParseSize(ReadOnlySpan<byte> digits)
    {
        if (!Utf8Parser.TryParse(digits, out int size, out var consumed) || consumed != digits.Length || size < 0)
        {
            throw new LeafProtocolException("Bad or Missing Size: '" + Encoding.UTF8.GetString(digits) + "'");
        }

        return size;
    }
}
