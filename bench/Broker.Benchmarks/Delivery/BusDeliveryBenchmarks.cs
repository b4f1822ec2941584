using System.Buffers;
using System.Buffers.Binary;
using BenchmarkDotNet.Attributes;
using Broker.Abstractions;
using Broker.Benchmarks.Embedded;
using Broker.Core.Internal;

namespace Broker.Benchmarks.Delivery;

/// <summary>
/// Delivery to in-process clients, the path JetStream's stream ingest and protocol adapters stand on. A producer routes
/// 128-byte messages exactly where a parsed PUB does; one operation is one message:
/// <list type="bullet">
/// <item><see cref="ToHandler128"/>: into a bus client's handler queue (a copy into pooled memory), the handler run by
/// the client's drain, here on the benchmark thread.</item>
/// <item><see cref="HandlerAcks128"/>: the stream-ingest pattern: each message carries a reply subject, the handler
/// answers with a 16-byte acknowledgement through its own client, and a NATS connection receives the acknowledgements,
/// flushed once per handler batch.</item>
/// <item><see cref="ToAdapterOutput128"/>: into an adapter connection's output through an output subscription, whose
/// encoder writes a length-prefixed frame, flushed once per producer batch (how an MQTT connection receives fan-out).</item>
/// </list>
/// Steady state allocates nothing.
/// </summary>
[MemoryDiagnoser]
public class BusDeliveryBenchmarks
{
    /// <summary>Messages published between two flushes: one simulated read of the producer's socket.</summary>
    public const int Batch = 64;

    private static readonly byte[] HandlerSubject = "bench.bus.handler"u8.ToArray();
    private static readonly byte[] IngestSubject = "bench.bus.ingest"u8.ToArray();
    private static readonly byte[] AdapterSubject = "bench.bus.adapter"u8.ToArray();
    private static readonly byte[] AckSubject = "bench.acks.1"u8.ToArray();
    private static readonly ReadOnlySequence<byte> Ack = new(new byte[16]);

    private EmbeddedBroker broker = null!;
    private InlineDrains drains = null!;
    private IBusClient service = null!;
    private IBusConnection adapter = null!;
    private InMemoryConnection adapterConnection = null!;
    private ReadOnlySequence<byte> payload;
    private long handled;

    [GlobalSetup]
    public void Setup()
    {
        broker = new EmbeddedBroker();
        drains = new InlineDrains(broker.Core);
        var bus = new MessageBus(broker.Core);
        service = bus.CreateClient(new BusClientOptions { Name = "bench-service" });
        service.Subscribe("bench.bus.handler", null, (in BusMessage _) => handled++);
        var client = service;
        service.Subscribe("bench.bus.ingest", null, (in BusMessage message) =>
        {
            handled++;
            client.Publish(message.ReplyTo, default, ReadOnlySequence<byte>.Empty, Ack);
        });

        // The acknowledgements' receiver, as a JetStream publisher's inbox subscription.
        broker.Connect(headers: false, "SUB bench.acks.* 1");

        adapterConnection = new InMemoryConnection();
        var connected = bus.ConnectAsync(adapterConnection, new BusConnectOptions { Protocol = "bench" }).AsTask().GetAwaiter().GetResult();
        adapter = connected.Connection!;
        adapter.Subscribe("bench.bus.adapter", null, static (in BusMessage message, IBufferWriter<byte> output) =>
        {
            var length = 2 + message.Subject.Length + (int)message.Payload.Length;
            var span = output.GetSpan(length);
            BinaryPrimitives.WriteUInt16BigEndian(span, (ushort)message.Subject.Length);
            message.Subject.CopyTo(span[2..]);
            message.Payload.CopyTo(span[(2 + message.Subject.Length)..]);
            output.Advance(length);
        });

        payload = new ReadOnlySequence<byte>(new byte[128]);
    }

    [GlobalCleanup]
    public void Cleanup()
    {
        adapter.DisposeAsync().AsTask().GetAwaiter().GetResult();
        service.DisposeAsync().AsTask().GetAwaiter().GetResult();
        broker.DisposeAsync().AsTask().GetAwaiter().GetResult();
        adapterConnection.DisposeAsync().AsTask().GetAwaiter().GetResult();
    }

    /// <summary>A message queued for a bus handler and handled.</summary>
    [Benchmark(OperationsPerInvoke = Batch)]
    public long ToHandler128()
    {
        PublishBatch(HandlerSubject, default);
        drains.Run();
        return handled;
    }

    /// <summary>A message with a reply subject handled by a bus handler that acknowledges it to a NATS connection.</summary>
    [Benchmark(OperationsPerInvoke = Batch)]
    public long HandlerAcks128()
    {
        PublishBatch(IngestSubject, AckSubject);
        drains.Run();
        return broker.DrainAll();
    }

    /// <summary>A message encoded into an adapter connection's output.</summary>
    [Benchmark(OperationsPerInvoke = Batch)]
    public long ToAdapterOutput128()
    {
        PublishBatch(AdapterSubject, default);
        return adapterConnection.Drain();
    }

    private void PublishBatch(byte[] subject, byte[]? replyTo)
    {
        var publisher = broker.Publisher;
        for (var i = 0; i < Batch; i++)
        {
            publisher.Publish(subject, replyTo, ReadOnlySequence<byte>.Empty, payload);
        }

        publisher.FlushPending();
    }
}
