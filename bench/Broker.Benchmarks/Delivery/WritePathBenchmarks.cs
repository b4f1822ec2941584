using System.Buffers;
using System.Text;
using BenchmarkDotNet.Attributes;
using Broker.Benchmarks.Embedded;
using Broker.Core.Internal.Clients;
using Broker.Core.Internal.Subscriptions;

namespace Broker.Benchmarks.Delivery;

/// <summary>
/// The write path alone: <c>NatsClient.Deliver</c> formatting MSG/HMSG lines and copying payloads into the output
/// pipe under the write lock, one flush per batch, output drained by the benchmark. Covers the single-span path
/// (frames up to 16 KiB), the segment-by-segment path for larger frames, reply subjects and headers.
/// </summary>
[MemoryDiagnoser]
public class WritePathBenchmarks
{
    /// <summary>Deliveries between two flushes.</summary>
    public const int Batch = 64;

    /// <summary>Deliveries between two flushes for 32 KiB frames (a pipe holds a bounded number of pooled segments).</summary>
    public const int LargeBatch = 4;

    private static readonly byte[] Subject = "bench.write.subject"u8.ToArray();
    private static readonly byte[] Reply = "_INBOX.Xq3DPvNn1rKp0aUB7sbBcG.Zk2NWm2yVhHPDHYVB3fjTF"u8.ToArray();

    private EmbeddedBroker broker = null!;
    private NatsClient subscriber = null!;
    private Subscription subscription = null!;
    private ReadOnlySequence<byte> payload16;
    private ReadOnlySequence<byte> payload128;
    private ReadOnlySequence<byte> payload32K;
    private ReadOnlySequence<byte> headers;

    [GlobalSetup]
    public void Setup()
    {
        broker = new EmbeddedBroker();
        var connected = broker.Connect(headers: true, "SUB bench.write.subject 7");
        subscriber = connected.Client;
        subscription = subscriber.GetSubscriptions()[0];
        payload16 = new ReadOnlySequence<byte>(new byte[16]);
        payload128 = new ReadOnlySequence<byte>(new byte[128]);
        payload32K = new ReadOnlySequence<byte>(new byte[32 * 1024]);
        headers = new ReadOnlySequence<byte>(Encoding.ASCII.GetBytes("NATS/1.0\r\nNats-Msg-Id: 5d7f1c2a\r\n\r\n"));
    }

    [GlobalCleanup]
    public void Cleanup() => broker.DisposeAsync().AsTask().GetAwaiter().GetResult();

    [Benchmark(OperationsPerInvoke = Batch)]
    public long Msg16() => DeliverBatch(Batch, default, ReadOnlySequence<byte>.Empty, payload16);

    [Benchmark(OperationsPerInvoke = Batch)]
    public long Msg128WithReply() => DeliverBatch(Batch, Reply, ReadOnlySequence<byte>.Empty, payload128);

    [Benchmark(OperationsPerInvoke = Batch)]
    public long HMsg128() => DeliverBatch(Batch, default, headers, payload128);

    [Benchmark(OperationsPerInvoke = LargeBatch)]
    public long Msg32K() => DeliverBatch(LargeBatch, default, ReadOnlySequence<byte>.Empty, payload32K);

    private long DeliverBatch(int count, ReadOnlySpan<byte> reply, in ReadOnlySequence<byte> messageHeaders, in ReadOnlySequence<byte> payload)
    {
        var publisher = broker.Publisher;
        for (var i = 0; i < count; i++)
        {
            subscriber.Deliver(publisher, subscription, Subject, reply, messageHeaders, payload);
        }

        publisher.FlushPending();
        return broker.DrainAll();
    }
}
