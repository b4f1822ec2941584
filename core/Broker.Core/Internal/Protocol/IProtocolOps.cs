using System.Buffers;

namespace Broker.Core.Internal.Protocol;

/// <summary>
/// What the parser calls for each complete operation. Implemented by a struct wrapping the connection so the
/// generic parser is specialised and the calls are direct. Each method returns <see langword="false"/> to stop
/// parsing (the connection is closing). Spans are valid only during the call.
/// </summary>
internal interface IProtocolOps
{
    /// <summary>Authentication is pending: any operation other than CONNECT is an Authorization Violation.</summary>
    bool ConnectRequired { get; }

    /// <summary>The client announced header support, so HPUB is allowed.</summary>
    bool HeadersEnabled { get; }

    bool OnConnect(ReadOnlySpan<byte> json);

    bool OnPub(ReadOnlySpan<byte> subject, ReadOnlySpan<byte> replyTo, in ReadOnlySequence<byte> payload);

    bool OnHPub(ReadOnlySpan<byte> subject, ReadOnlySpan<byte> replyTo, in ReadOnlySequence<byte> headers, in ReadOnlySequence<byte> payload);

    bool OnSub(ReadOnlySpan<byte> subject, ReadOnlySpan<byte> queue, ReadOnlySpan<byte> sid);

    /// <summary>UNSUB; <paramref name="max"/> is -1 when absent or not a number (then the sid is removed at once).</summary>
    bool OnUnsub(ReadOnlySpan<byte> sid, long max);

    bool OnPing();

    bool OnPong();

    /// <summary>The client sent <c>-ERR</c>; nats-server closes such a connection.</summary>
    bool OnErr(ReadOnlySpan<byte> message);
}
