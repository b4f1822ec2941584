using System.Buffers;
using Broker.Core.Internal.Protocol;

namespace Broker.Benchmarks.Parsing;

/// <summary>Parser callbacks that only count, so a parser benchmark measures the parser and nothing behind it.</summary>
internal struct CountingOps : IProtocolOps
{
    public long Operations;
    public long PayloadBytes;

    public readonly bool ConnectRequired => false;

    public readonly bool HeadersEnabled => true;

    public bool OnConnect(ReadOnlySpan<byte> json) => ++Operations > 0;

    public bool OnPub(ReadOnlySpan<byte> subject, ReadOnlySpan<byte> replyTo, in ReadOnlySequence<byte> payload)
    {
        PayloadBytes += payload.Length;
        return ++Operations > 0;
    }

    public bool OnHPub(ReadOnlySpan<byte> subject, ReadOnlySpan<byte> replyTo, in ReadOnlySequence<byte> headers, in ReadOnlySequence<byte> payload)
    {
        PayloadBytes += headers.Length + payload.Length;
        return ++Operations > 0;
    }

    public bool OnSub(ReadOnlySpan<byte> subject, ReadOnlySpan<byte> queue, ReadOnlySpan<byte> sid) => ++Operations > 0;

    public bool OnUnsub(ReadOnlySpan<byte> sid, long max) => ++Operations > 0;

    public bool OnPing() => ++Operations > 0;

    public bool OnPong() => ++Operations > 0;

    public bool OnErr(ReadOnlySpan<byte> message) => ++Operations > 0;
}
