using System.Buffers;
using System.Buffers.Text;
using Broker.Core.Internal.Logging;
using Broker.Core.Internal.Subscriptions;

namespace Broker.Core.Internal.Clients;

/// <summary>
/// Writing to the client: deliveries (MSG/HMSG) and protocol replies go straight into the output (<see cref="ConnectionOutput"/>)
/// under its lock; <see cref="FlushOutput"/> commits them once per producer batch. A flush that cannot complete means
/// three quarters of max_pending or more are buffered: producers stall briefly on it (nats-server's fast-producer
/// stall), and beyond max_pending the client is closed as a slow consumer, without -ERR, as nats-server does.
/// </summary>
internal sealed partial class NatsClient
{
    // Frames up to this size are written with one Reserve/Advance; larger ones are copied segment by segment.
    private const int SingleSpanFrameLimit = 16 * 1024;

    // Longest possible "HMSG  <sid>  <hdr> <total>\r\n" around subject, sid and reply: two 10-digit sizes and spaces.
    private const int MessageLineOverhead = 5 + 4 + 10 + 1 + 10 + 2;

    public override void Deliver(
        ClientBase producer,
        Subscription subscription,
        ReadOnlySpan<byte> subject,
        ReadOnlySpan<byte> replyTo,
        in ReadOnlySequence<byte> headers,
        in ReadOnlySequence<byte> payload)
    {
        // Headers are stripped for clients that did not announce support for them.
        var withHeaders = !headers.IsEmpty && SupportsHeaders;
        var headerLength = withHeaders ? (int)headers.Length : 0;
        var totalLength = headerLength + (int)payload.Length;
        var sid = subscription.Sid;
        var lineLength = MessageLineOverhead + subject.Length + sid.Length + replyTo.Length;

        lock (output.Gate)
        {
            if (output.Completed)
            {
                return;
            }

            var frameLength = lineLength + totalLength + 2;
            if (frameLength <= SingleSpanFrameLimit)
            {
                var span = output.Reserve(frameLength);
                var written = WriteMessageLine(span, withHeaders, subject, sid, replyTo, headerLength, totalLength);
                if (withHeaders)
                {
                    headers.CopyTo(span[written..]);
                    written += headerLength;
                }

                payload.CopyTo(span[written..]);
                written += totalLength - headerLength;
                span[written++] = (byte)'\r';
                span[written++] = (byte)'\n';
                output.Advance(written);
            }
            else
            {
                output.Advance(WriteMessageLine(output.Reserve(lineLength), withHeaders, subject, sid, replyTo, headerLength, totalLength));
                if (withHeaders)
                {
                    output.Write(headers);
                }

                output.Write(payload);
                output.Write("\r\n"u8);
            }

            OutMessages++;
            OutBytes += totalLength;
            if (output.AddUnflushed(lineLength + totalLength))
            {
                producer.RequestYield();
            }
        }

        if (tracing)
        {
            TraceOutMessage(subject, sid, replyTo, withHeaders, headerLength, totalLength);
        }

        producer.AddPendingFlush(this);
    }

    public override Task? FlushOutput()
    {
        var stall = output.Flush(this, out var slowConsumer);
        if (slowConsumer)
        {
            OnSlowConsumer();
        }

        return stall;
    }

    /// <summary>Queues a protocol line (PONG, +OK, -ERR, INFO); flushed with the current batch or at once.</summary>
    private void SendProtocol(ReadOnlySpan<byte> line, bool flushNow = false)
    {
        if (tracing)
        {
            TraceOutProtocol(line);
        }

        lock (output.Gate)
        {
            if (output.Completed)
            {
                return;
            }

            output.Write(line);
        }

        if (flushNow)
        {
            FlushOutput();
        }
        else
        {
            AddPendingFlush(this);
        }
    }

    /// <summary>-ERR 'Permissions Violation for ... "subject"' with nats-server's %q quoting, plus an optional queue.</summary>
    private void SendPermissionError(string prefix, ReadOnlySpan<byte> subject, ReadOnlySpan<byte> queue, string suffix = "", bool flushNow = false)
    {
        var text = "-ERR '" + prefix + GoQuote.Quote(subject)
            + (queue.IsEmpty ? string.Empty : " using queue " + GoQuote.Quote(queue)) + suffix + "'\r\n";
        SendProtocol(System.Text.Encoding.UTF8.GetBytes(text), flushNow);
    }

    private static int WriteMessageLine(Span<byte> span, bool withHeaders, ReadOnlySpan<byte> subject, ReadOnlySpan<byte> sid, ReadOnlySpan<byte> replyTo, int headerLength, int totalLength)
    {
        int written;
        if (withHeaders)
        {
            "HMSG "u8.CopyTo(span);
            written = 5;
        }
        else
        {
            "MSG "u8.CopyTo(span);
            written = 4;
        }

        subject.CopyTo(span[written..]);
        written += subject.Length;
        span[written++] = (byte)' ';
        sid.CopyTo(span[written..]);
        written += sid.Length;
        span[written++] = (byte)' ';
        if (!replyTo.IsEmpty)
        {
            replyTo.CopyTo(span[written..]);
            written += replyTo.Length;
            span[written++] = (byte)' ';
        }

        if (withHeaders)
        {
            Utf8Formatter.TryFormat(headerLength, span[written..], out var headerDigits);
            written += headerDigits;
            span[written++] = (byte)' ';
        }

        Utf8Formatter.TryFormat(totalLength, span[written..], out var digits);
        written += digits;
        span[written++] = (byte)'\r';
        span[written++] = (byte)'\n';
        return written;
    }
}
