using System.Buffers;
using Broker.Core.Internal.Protocol;
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
        var lineLength = MessageFrame.LineOverhead + subject.Length + sid.Length + replyTo.Length;
        bool slowConsumer;
        lock (output.Gate)
        {
            if (output.Completed)
            {
                return;
            }

            // nats-server's queueOutbound: a message that would pass max_pending is not appended, and the client is
            // closed as a slow consumer (below, with the lock released).
            slowConsumer = output.WouldPassMaxPending(lineLength + totalLength);
            if (!slowConsumer)
            {
                MessageFrame.Write(output, withHeaders, subject, sid, replyTo, headers, payload, headerLength, totalLength, lineLength);
                OutMessages++;
                OutBytes += totalLength;
                if (output.AddUnflushed(lineLength + totalLength))
                {
                    producer.RequestYield();
                }
            }
        }

        if (slowConsumer)
        {
            OnSlowConsumer();
            return;
        }

        if (trace.Enabled)
        {
            trace.TraceOutMessage(subject, sid, replyTo, withHeaders, headerLength, totalLength);
        }

        producer.AddPendingFlush(this);
    }

    // The read loop ends its batches holding no lock.
    protected override bool SendsInline => true;

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
        if (trace.Enabled)
        {
            trace.TraceOutProtocol(line);
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

    private void SendPermissionError(string prefix, ReadOnlySpan<byte> subject, ReadOnlySpan<byte> queue, string suffix = "", bool flushNow = false) =>
        SendProtocol(ServerMessages.PermissionViolation(prefix, subject, queue, suffix), flushNow);
}
