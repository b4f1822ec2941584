using System.Buffers;
using System.Text;
using Broker.Core.Internal.Clients;

namespace Broker.Core.Internal.Leaf;

/// <summary>
/// What the spoke writes: LMSG/HMSG (<c>LMSG subject [+ reply queues... | | queues... | reply] size</c>, nats-server's
/// <c>msgHeaderForRouteOrLeaf</c>), LS+/LS- (<c>writeLeafSub</c>), CONNECT and PONG. Messages are appended under the
/// output's lock and flushed once per producer batch, as for clients.
/// </summary>
internal sealed partial class LeafConnection
{
    /// <summary>
    /// Sends one message to the hub, with the queue groups it is to serve; false when the link is closed or the hub's
    /// permissions (and <c>deny_exports</c>) keep the subject here.
    /// </summary>
    public override bool SendMessage(ClientBase producer, ReadOnlySpan<byte> subject, ReadOnlySpan<byte> deliverAs, ReadOnlySpan<byte> replyTo, in ReadOnlySequence<byte> headers, in ReadOnlySequence<byte> payload, ReadOnlySpan<byte[]?> queues)
    {
        if (!established || !permissions.CanPublish(subject))
        {
            return false;
        }

        lock (output.Gate)
        {
            if (output.Completed)
            {
                return false;
            }

            var totalLength = AppendMessage(output, producer, "LMSG "u8, "HMSG "u8, SupportsHeaders, subject, deliverAs, replyTo, headers, payload, queues);
            OutMessages++;
            OutBytes += totalLength;
        }

        producer.AddPendingFlush(this);
        return true;
    }

    /// <summary>
    /// Appends one message frame of a link (leaf node or route) to <paramref name="output"/>, whose lock the caller
    /// holds: the line after <paramref name="op"/> (<paramref name="headerOp"/> when headers go too: the other side
    /// supports them), headers, payload, CRLF; asks <paramref name="producer"/> to yield when the output is far behind.
    /// Returns the bytes of headers and payload written.
    /// </summary>
    internal static int AppendMessage(ConnectionOutput output, ClientBase producer, ReadOnlySpan<byte> op, ReadOnlySpan<byte> headerOp, bool supportsHeaders, ReadOnlySpan<byte> subject, ReadOnlySpan<byte> deliverAs, ReadOnlySpan<byte> replyTo, in ReadOnlySequence<byte> headers, in ReadOnlySequence<byte> payload, ReadOnlySpan<byte[]?> queues)
    {
        var withHeaders = !headers.IsEmpty && supportsHeaders;
        var headerLength = withHeaders ? (int)headers.Length : 0;
        var totalLength = headerLength + (int)payload.Length;

        // A delivery under another subject (JetStream's) travels as reply@subject, as nats-server sends it across links.
        var remap = !replyTo.IsEmpty && !deliverAs.SequenceEqual(subject);
        var lineLength = MessageFrame.LineOverhead + headerOp.Length + subject.Length + replyTo.Length + 4 + (remap ? deliverAs.Length + 1 : 0);
        foreach (var queue in queues)
        {
            lineLength += queue!.Length + 1;
        }

        var span = output.Reserve(lineLength);
        var written = WriteMessageLine(span, withHeaders ? headerOp : op, withHeaders, subject, replyTo, remap ? deliverAs : default, queues, headerLength, totalLength);
        output.Advance(written);
        if (withHeaders)
        {
            output.Write(headers);
        }

        output.Write(payload);
        output.Write("\r\n"u8);
        if (output.AddUnflushed(written + totalLength + 2))
        {
            producer.RequestYield();
        }

        return totalLength;
    }

    /// <summary>
    /// Writes a link's message line after <paramref name="op"/> (<c>LMSG </c>, or a route's <c>RMSG acc </c>): the
    /// subject, then <c>+ reply queues...</c>, <c>| queues...</c> or the reply alone, then the sizes; returns its length.
    /// </summary>
    internal static int WriteMessageLine(Span<byte> span, ReadOnlySpan<byte> op, bool withHeaders, ReadOnlySpan<byte> subject, ReadOnlySpan<byte> replyTo, ReadOnlySpan<byte> deliverAs, ReadOnlySpan<byte[]?> queues, int headerLength, int totalLength)
    {
        var written = Append(span, 0, op);
        written = Append(span, written, subject);
        span[written++] = (byte)' ';
        if (queues.Length > 0)
        {
            if (!replyTo.IsEmpty)
            {
                written = Append(span, written, "+ "u8);
                written = AppendReply(span, written, replyTo, deliverAs);
            }
            else
            {
                written = Append(span, written, "| "u8);
            }

            foreach (var queue in queues)
            {
                written = Append(span, written, queue);
                span[written++] = (byte)' ';
            }
        }
        else if (!replyTo.IsEmpty)
        {
            written = AppendReply(span, written, replyTo, deliverAs);
        }

        return MessageFrame.WriteSizes(span, written, withHeaders, headerLength, totalLength);
    }

    private static int AppendReply(Span<byte> span, int written, ReadOnlySpan<byte> replyTo, ReadOnlySpan<byte> deliverAs)
    {
        written = Append(span, written, replyTo);
        if (!deliverAs.IsEmpty)
        {
            span[written++] = (byte)'@';
            written = Append(span, written, deliverAs);
        }

        span[written++] = (byte)' ';
        return written;
    }

    private static int Append(Span<byte> span, int written, ReadOnlySpan<byte> bytes)
    {
        bytes.CopyTo(span[written..]);
        return written + bytes.Length;
    }

    /// <summary>
    /// Sends a change of our interest: LS+ with the weight for a queue key, LS+ or LS- for a plain one (0: gone). Keys
    /// the hub's permissions refuse are not sent (a newer hub would close the link), except the loop subject.
    /// </summary>
    public void SendInterest(string key, int n)
    {
        if (!established || !MaySend(key))
        {
            return;
        }

        SendProtocol(Encoding.UTF8.GetBytes(InterestLine(key, n)));
    }

    /// <summary>Sends the whole interest on connect (nats-server's <c>initLeafNodeSmapAndSendSubs</c>), the loop subject with it.</summary>
    public void SendInterestSnapshot(Dictionary<string, int> counts, string loopSubject)
    {
        var lines = new StringBuilder();
        foreach (var (key, n) in counts)
        {
            if (MaySend(key))
            {
                lines.Append(InterestLine(key, n));
            }
        }

        lines.Append(InterestLine(loopSubject, 1));
        SendProtocol(Encoding.UTF8.GetBytes(lines.ToString()));
    }

    private bool MaySend(string key)
    {
        if (key.StartsWith("$LDS.", StringComparison.Ordinal))
        {
            return true;
        }

        return permissions.CanSubscribe(Encoding.UTF8.GetBytes(LeafInterest.SubjectOf(key)));
    }

    // writeLeafSub: "LS+ key[ weight]" while n > 0 (the weight for queue keys only), "LS- key" at 0.
    private static string InterestLine(string key, int n)
    {
        if (n <= 0)
        {
            return "LS- " + key + "\r\n";
        }

        return key.Contains(' ', StringComparison.Ordinal)
            ? "LS+ " + key + " " + n.ToString(System.Globalization.CultureInfo.InvariantCulture) + "\r\n"
            : "LS+ " + key + "\r\n";
    }

    /// <summary>Appends a protocol line and flushes it.</summary>
    internal void SendProtocol(ReadOnlySpan<byte> line)
    {
        lock (output.Gate)
        {
            if (output.Completed)
            {
                return;
            }

            output.Write(line);
        }

        FlushOutput();
    }

    public override Task? FlushOutput()
    {
        var stall = output.Flush(this, out var slowConsumer);
        if (slowConsumer)
        {
            // Off the caller's locks (LeafInterest.gate may be held: docs/locks.md 3b).
            _ = Task.Run(() => Close("Slow Consumer (Write Deadline)"));
        }

        return stall;
    }
}
