using System.Buffers;
using Broker.Core.Internal.Clients;
using Broker.Core.Internal.Leaf;

namespace Broker.Core.Internal.Routes;

/// <summary>
/// What the route writes: RMSG/HMSG (<c>RMSG acc subject [+ reply queues... | | queues... | reply] size</c>,
/// nats-server's <c>msgHeaderForRouteOrLeaf</c>), RS+/RS-, CONNECT, INFO, PING and PONG. Messages are appended under
/// the output's lock and flushed once per producer batch, as for clients.
/// </summary>
internal sealed partial class RouteConnection
{
    private long outMessages;
    private long outBytes;

    /// <summary>Messages and bytes sent on the route.</summary>
    public (long Messages, long Bytes) Sent
    {
        get
        {
            lock (output.Gate)
            {
                return (outMessages, outBytes);
            }
        }
    }

    /// <summary>
    /// Sends one message of an account (<paramref name="rmsg"/>/<paramref name="hmsg"/> are its <c>RMSG acc </c> and
    /// <c>HMSG acc </c> prefixes), with the queue groups it is to serve; false before registration or after close.
    /// Headers are dropped for a member without header support.
    /// </summary>
    public bool SendMessage(ClientBase producer, RouteAccountLink link, byte[] rmsg, byte[] hmsg, ReadOnlySpan<byte> subject, ReadOnlySpan<byte> deliverAs, ReadOnlySpan<byte> replyTo, in ReadOnlySequence<byte> headers, in ReadOnlySequence<byte> payload, ReadOnlySpan<byte[]?> queues)
    {
        if (!registered || (cluster.Permissions is { } permissions && permissions.DeniesDelivery(subject)))
        {
            return false;
        }

        lock (output.Gate)
        {
            if (output.Completed)
            {
                return false;
            }

            outBytes += LeafConnection.AppendMessage(output, producer, rmsg, hmsg, SupportsHeaders, subject, deliverAs, replyTo, headers, payload, queues);
            outMessages++;
        }

        producer.AddPendingFlush(link);
        return true;
    }

    /// <summary>Appends a protocol line and flushes it.</summary>
    public void SendProtocol(ReadOnlySpan<byte> line)
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

    public Task? FlushOutput()
    {
        var stall = output.Flush(owner, out var slowConsumer);
        if (slowConsumer)
        {
            // Off the caller's locks (LeafInterest.gate may be held: docs/locks.md).
            _ = Task.Run(() => Close("Slow Consumer (Write Deadline)"));
        }

        return stall;
    }
}
