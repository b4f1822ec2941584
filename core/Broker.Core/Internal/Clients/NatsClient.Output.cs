using System.Buffers;
using System.Buffers.Text;
using Broker.Abstractions;
using Broker.Core.Internal.Logging;
using Broker.Core.Internal.Subscriptions;

namespace Broker.Core.Internal.Clients;

/// <summary>
/// Writing to the client: deliveries (MSG/HMSG) and protocol replies go straight into the output pipe under one
/// lock; <see cref="FlushOutput"/> commits them once per producer batch. A flush that cannot complete means three
/// quarters of max_pending or more are buffered: producers stall briefly on it (nats-server's fast-producer stall),
/// and beyond max_pending the client is closed as a slow consumer, without -ERR, as nats-server does.
/// </summary>
internal sealed partial class NatsClient
{
    // Frames up to this size are written with one GetSpan/Advance; larger ones are copied segment by segment.
    private const int SingleSpanFrameLimit = 16 * 1024;

    // Longest possible "HMSG  <sid>  <hdr> <total>\r\n" around subject, sid and reply: two 10-digit sizes and spaces.
    private const int MessageLineOverhead = 5 + 4 + 10 + 1 + 10 + 2;

    private readonly Lock writeLock = new();
    private bool outputCompleted;

    // The flush the output pipe has not completed: the peer is far behind. Guarded by writeLock.
    private Task? stalledFlush;

    // The output memory being filled and how much of it holds frames not yet passed to Advance. Deliveries append
    // here and Advance once per segment or flush instead of once per frame: the pipe takes its own lock in Advance,
    // which producers and the send loop contended for on every message. Guarded by writeLock.
    private Memory<byte> head;
    private int headUsed;

    // Bytes written since the last flush. Guarded by writeLock.
    private long unflushedBytes;
    private long stalledSince;

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
                var span = Reserve(frameLength);
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
                headUsed += written;
            }
            else
            {
                CommitHead();
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

            // Bound what one producer batch piles up here: a producer that parsed a large input buffer must not add
            // more than an eighth of max_pending between flushes, nor anything while this client is far behind.
            unflushedBytes += lineLength + totalLength;
            if (stalledFlush is { IsCompleted: false } || unflushedBytes > connection.Settings.MaxPendingOutputBytes / 8)
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
        Task? stall;
        lock (writeLock)
        {
            if (outputCompleted)
            {
                return null;
            }

            if (stalledFlush is { IsCompleted: false })
            {
                // Committing more waits for the outstanding flush; its continuation flushes again.
                stall = stalledFlush;
            }
            else
            {
                unflushedBytes = 0;
                CommitHead();
                var flush = output.FlushAsync();
                if (flush.IsCompleted)
                {
                    stalledFlush = null;
                    _ = flush.GetAwaiter().GetResult();
                    return null;
                }

                // Three quarters of max_pending or more are waiting: producers stall on this until the peer catches up.
                stall = stalledFlush = flush.AsTask();
                stalledSince = Environment.TickCount64;
                _ = stall.ContinueWith(static (_, state) => ((NatsClient)state!).FlushOutput(), this, CancellationToken.None, TaskContinuationOptions.None, TaskScheduler.Default);
            }
        }

        if (IsBeyondMaxPending())
        {
            OnSlowConsumer();
            return null;
        }

        return stall;
    }

    /// <summary>
    /// Whether more than max_pending waits to be sent (nats-server closes such a client). Without a byte count from
    /// the transport, a stall that outlasts the write deadline counts as the limit.
    /// </summary>
    private bool IsBeyondMaxPending()
    {
        var settings = connection.Settings;
        if (connection.Features.Get<IPendingOutputFeature>() is { } pending)
        {
            return pending.PendingOutputBytes > settings.MaxPendingOutputBytes;
        }

        return settings.WriteDeadline > TimeSpan.Zero
            && Environment.TickCount64 - Volatile.Read(ref stalledSince) > (long)settings.WriteDeadline.TotalMilliseconds;
    }

    /// <summary>Queues a protocol line (PONG, +OK, -ERR, INFO); flushed with the current batch or at once.</summary>
    private void SendProtocol(ReadOnlySpan<byte> line, bool flushNow = false)
    {
        if (tracing)
        {
            TraceOutProtocol(line);
        }

        lock (writeLock)
        {
            if (outputCompleted)
            {
                return;
            }

            CommitHead();
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

    /// <summary>Room for <paramref name="size"/> bytes at the end of the head memory, starting a new one when it is full. Lock held.</summary>
    private Span<byte> Reserve(int size)
    {
        if (head.Length - headUsed < size)
        {
            CommitHead();
            head = output.GetMemory(size);
        }

        return head.Span[headUsed..];
    }

    /// <summary>Passes the frames written to the head memory to the pipe; before any other use of the writer. Lock held.</summary>
    private void CommitHead()
    {
        if (headUsed > 0)
        {
            output.Advance(headUsed);
        }

        head = default;
        headUsed = 0;
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
