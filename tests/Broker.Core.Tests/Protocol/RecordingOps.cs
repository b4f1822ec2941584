using System.Buffers;
using System.Text;
using Broker.Core.Internal.Protocol;

namespace Broker.Core.Tests.Protocol;

/// <summary>Records every operation the parser dispatches, as text, for comparison across split points.</summary>
internal struct RecordingOps : IProtocolOps
{
    public RecordingOps(List<string> log, bool connectRequired = false, bool headers = true)
    {
        Log = log;
        ConnectRequiredValue = connectRequired;
        HeadersValue = headers;
    }

    public List<string> Log;
    public bool ConnectRequiredValue;
    public bool HeadersValue;
    public string? StopOn;

    public readonly bool ConnectRequired => ConnectRequiredValue;

    public readonly bool HeadersEnabled => HeadersValue;

    public readonly bool OnConnect(ReadOnlySpan<byte> json) => Add("CONNECT " + S(json));

    public readonly bool OnPub(ReadOnlySpan<byte> subject, ReadOnlySpan<byte> replyTo, in ReadOnlySequence<byte> payload)
        => Add($"PUB {S(subject)} [{S(replyTo)}] {S(payload)}");

    public readonly bool OnHPub(ReadOnlySpan<byte> subject, ReadOnlySpan<byte> replyTo, in ReadOnlySequence<byte> headers, in ReadOnlySequence<byte> payload)
        => Add($"HPUB {S(subject)} [{S(replyTo)}] {S(headers)}|{S(payload)}");

    public readonly bool OnSub(ReadOnlySpan<byte> subject, ReadOnlySpan<byte> queue, ReadOnlySpan<byte> sid)
        => Add($"SUB {S(subject)} [{S(queue)}] {S(sid)}");

    public readonly bool OnUnsub(ReadOnlySpan<byte> sid, long max) => Add($"UNSUB {S(sid)} {max}");

    public readonly bool OnPing() => Add("PING");

    public readonly bool OnPong() => Add("PONG");

    public readonly bool OnErr(ReadOnlySpan<byte> message) => Add("-ERR " + S(message));

    private readonly bool Add(string entry)
    {
        Log.Add(entry);
        return StopOn is null || !entry.StartsWith(StopOn, StringComparison.Ordinal);
    }

    private static string S(ReadOnlySpan<byte> bytes) => Encoding.Latin1.GetString(bytes);

    private static string S(in ReadOnlySequence<byte> bytes) => Encoding.Latin1.GetString(bytes.ToArray());
}
