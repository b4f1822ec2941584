using System.Buffers.Text;
using System.Buffers;
using Broker.Core.Internal.Logging;
using Broker.Core.Internal.Subscriptions;

namespace Broker.Core.Internal.Clients;

/// <summary>
/// Writing to the client: deliveries (MSG/HMSG) and protocol replies go straight into the output pipe under one
/// lock; <see cref="FlushOutput"/> commits them once per producer batch. A flush that cannot complete means more
/// than max_pending is buffered: the client is closed as a slow consumer, without -ERR, as nats-server does.
/// </summary>
internal sealed partial class NatsClient
{
    // Frames up to this size are written with one GetSpan/Advance; larger ones are copied segment by segment.
    private const int SingleSpanFrameLimit = 16 * 1024;

    // Longest possible "HMSG  <sid>  <hdr> <total>\r\n" around subject, sid and reply: two 10-digit sizes and spaces.
    private const int MessageLineOverhead = 5 + 4 + 10 + 1 + 10 + 2;

    private readonly Lock writeLock = new();
    private bool outputCompleted;

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

        lock (writeLock)
        {
            if (outputCompleted)
            {
                return;
            }

            var frameLength = lineLength + totalLength + 2;
            if (frameLength <= SingleSpanFrameLimit)
            {
                var span = output.GetSpan(frameLength);
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
                var span = output.GetSpan(lineLength);
                output.Advance(WriteMessageLine(span, withHeaders, subject, sid, replyTo, headerLength, totalLength));
                if (withHeaders)
                {
                    WriteSequence(headers);
                }

                WriteSequence(payload);
                output.Write("\r\n"u8);
            }

            OutMessages++;
            OutBytes += totalLength;
        }

        producer.AddPendingFlush(this);
    }

    public override void FlushOutput()
    {
        bool slow;
        lock (writeLock)
        {
            if (outputCompleted)
            {
                return;
            }

            var flush = output.FlushAsync();
            slow = !flush.IsCompleted;
            if (slow)
            {
                // More than max_pending is waiting to be sent. Release the pending flush so nothing waits on it.
                output.CancelPendingFlush();
            }

            if (flush.IsCompleted)
            {
                _ = flush.GetAwaiter().GetResult();
            }
        }

        if (slow)
        {
            OnSlowConsumer();
        }
    }

    /// <summary>Queues a protocol line (PONG, +OK, -ERR, INFO); flushed with the current batch or at once.</summary>
    private void SendProtocol(ReadOnlySpan<byte> line, bool flushNow = false)
    {
        lock (writeLock)
        {
            if (outputCompleted)
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

    private void WriteSequence(in ReadOnlySequence<byte> sequence)
    {
        foreach (var segment in sequence)
        {
            output.Write(segment.Span);
        }
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
