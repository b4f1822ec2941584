using System.Buffers;
using System.Text;
using BenchmarkDotNet.Attributes;
using Broker.Core.Internal.Protocol;
using Broker.TestKit;

namespace Broker.Benchmarks.Parsing;

/// <summary>
/// The protocol parser over a read buffer of <see cref="Batch"/> operations, as the read loop hands it one pipe
/// read: PING, PUB and HPUB wholly inside one segment (the fast path), and PUBs whose control line straddles two
/// segments (the slow path that copies the line into the scratch buffer). Steady state allocates nothing.
/// </summary>
[MemoryDiagnoser]
public class ParserBenchmarks
{
    /// <summary>Operations in one benchmark invocation (one simulated read).</summary>
    public const int Batch = 256;

    private const string Subject = "bench.parse.subject";
    private const string Payload = "0123456789abcdef";

    private static readonly ParserLimits Limits = new(4096, 1024 * 1024);

    private readonly byte[] scratch = new byte[4096 + ProtocolParser.ControlLineAllowance + 2];
    private ReadOnlySequence<byte> pings;
    private ReadOnlySequence<byte> pubs;
    private ReadOnlySequence<byte> hpubs;
    private ReadOnlySequence<byte> splitPubs;

    [GlobalSetup]
    public void Setup()
    {
        var pub = $"PUB {Subject} {Payload.Length}\r\n{Payload}\r\n";
        const string Headers = "NATS/1.0\r\nBench-Id: 1234567\r\n\r\n";
        var hpub = $"HPUB {Subject} {Headers.Length} {Headers.Length + Payload.Length}\r\n{Headers}{Payload}\r\n";

        pings = Repeat("PING\r\n");
        pubs = Repeat(pub);
        hpubs = Repeat(hpub);
        splitPubs = SplitEachControlLine(Encoding.ASCII.GetBytes(pub), cut: 10);
    }

    [Benchmark(OperationsPerInvoke = Batch)]
    public long Ping() => Parse(pings);

    [Benchmark(OperationsPerInvoke = Batch)]
    public long Pub() => Parse(pubs);

    [Benchmark(OperationsPerInvoke = Batch)]
    public long HPub() => Parse(hpubs);

    [Benchmark(OperationsPerInvoke = Batch)]
    public long PubSplitAcrossSegments() => Parse(splitPubs);

    private long Parse(ReadOnlySequence<byte> buffer)
    {
        var ops = default(CountingOps);
        var status = ProtocolParser.Parse(ref ops, ref buffer, Limits, scratch, out _);
        if (status != ParseStatus.NeedMoreData || ops.Operations != Batch || !buffer.IsEmpty)
        {
            throw new InvalidOperationException($"Parsed {ops.Operations} of {Batch} operations ({status}).");
        }

        return ops.Operations + ops.PayloadBytes;
    }

    private static ReadOnlySequence<byte> Repeat(string operation)
        => new(Encoding.ASCII.GetBytes(string.Concat(Enumerable.Repeat(operation, Batch))));

    /// <summary>
    /// One segment boundary inside every operation's control line, <paramref name="cut"/> bytes in, so each
    /// operation takes the straddling path.
    /// </summary>
    private static ReadOnlySequence<byte> SplitEachControlLine(byte[] frame, int cut)
    {
        var segments = new List<byte[]> { frame[..cut] };
        for (var i = 1; i < Batch; i++)
        {
            segments.Add([.. frame[cut..], .. frame[..cut]]);
        }

        segments.Add(frame[cut..]);
        return SegmentedSequence.Create(segments);
    }
}
