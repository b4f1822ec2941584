using System.Buffers;
using Broker.Core.Internal.Protocol;

namespace Broker.Core.Internal.Clients;

/// <summary>
/// The parser's view of a connection that traces (<c>-V</c>): each operation is traced as it arrived, as nats-server's
/// <c>traceInOp</c> prints it, then handed to the connection's own operations. A connection chooses it per read, so one
/// that does not trace (the usual case) pays nothing per operation. Generic over the inner struct, so the calls stay
/// direct.
/// </summary>
internal struct TracingProtocolOps<TOps>(TOps inner, ProtocolTrace trace) : IProtocolOps
    where TOps : struct, IProtocolOps
{
    private TOps inner = inner;

    public readonly bool ConnectRequired => inner.ConnectRequired;

    public readonly bool HeadersEnabled => inner.HeadersEnabled;

    public bool OnConnect(ReadOnlySpan<byte> json)
    {
        trace.TraceInConnect(json);
        return inner.OnConnect(json);
    }

    public bool OnPub(ReadOnlySpan<byte> subject, ReadOnlySpan<byte> replyTo, in ReadOnlySequence<byte> payload)
    {
        trace.TraceInPublish(subject, replyTo, ReadOnlySequence<byte>.Empty, payload, hpub: false);
        return inner.OnPub(subject, replyTo, payload);
    }

    public bool OnHPub(ReadOnlySpan<byte> subject, ReadOnlySpan<byte> replyTo, in ReadOnlySequence<byte> headers, in ReadOnlySequence<byte> payload)
    {
        trace.TraceInPublish(subject, replyTo, headers, payload, hpub: true);
        return inner.OnHPub(subject, replyTo, headers, payload);
    }

    public bool OnSub(ReadOnlySpan<byte> subject, ReadOnlySpan<byte> queue, ReadOnlySpan<byte> sid)
    {
        trace.TraceInSubscribe(subject, queue, sid);
        return inner.OnSub(subject, queue, sid);
    }

    public bool OnUnsub(ReadOnlySpan<byte> sid, long max)
    {
        trace.TraceInUnsubscribe(sid, max);
        return inner.OnUnsub(sid, max);
    }

    public bool OnPing()
    {
        trace.TraceIn("PING");
        return inner.OnPing();
    }

    public bool OnPong()
    {
        trace.TraceIn("PONG");
        return inner.OnPong();
    }

    // As nats-server, a -ERR from the client is logged by the connection, not traced.
    public bool OnErr(ReadOnlySpan<byte> message) => inner.OnErr(message);
}
