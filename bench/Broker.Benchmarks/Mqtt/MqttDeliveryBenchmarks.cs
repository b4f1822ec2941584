using System.Buffers;
using BenchmarkDotNet.Attributes;
using Broker.Abstractions;
using Broker.Adapters.Mqtt;
using Broker.Adapters.Mqtt.Internal.Connections;
using Broker.Benchmarks.Embedded;
using Broker.Core.Internal;
using Microsoft.Extensions.Logging.Abstractions;

namespace Broker.Benchmarks.Mqtt;

/// <summary>
/// QoS 0 delivery to MQTT subscribers end to end inside the process: an in-process bus client publishes 128 bytes,
/// the broker routes it to an MQTT 3.1.1 or 5 connection (connected and subscribed through the protocol over an
/// in-memory transport), which formats the PUBLISH into its output; the benchmark drains the output.
/// </summary>
[MemoryDiagnoser]
public class MqttDeliveryBenchmarks
{
    public const int Batch = 64;

    private static readonly byte[] Subject = "sensors.kitchen.temperature"u8.ToArray();

    private EmbeddedBroker broker = null!;
    private InlineDrains drains = null!;
    private MqttProtocolHandler handler = null!;
    private InMemoryConnection connection = null!;
    private IBusClient publisher = null!;
    private MqttConnection client = null!;
    private ReadOnlySequence<byte> payload;
    private readonly CancellationTokenSource stopping = new();

    [Params(4, 5)]
    public int Level { get; set; }

    [GlobalSetup]
    public void Setup()
    {
        broker = new EmbeddedBroker();
        var bus = new MessageBus(broker.Core);
        handler = new MqttProtocolHandler(new MqttOptions(), bus, jetStreamEnabled: false, NullLogger.Instance);
        connection = new InMemoryConnection();
        _ = handler.OnConnectionAsync(connection, stopping.Token);
        Send(Level == 5
            ? [0x10, 14, 0, 4, (byte)'M', (byte)'Q', (byte)'T', (byte)'T', 5, 0x02, 0, 60, 0, 0, 1, (byte)'b']
            : [0x10, 13, 0, 4, (byte)'M', (byte)'Q', (byte)'T', (byte)'T', 4, 0x02, 0, 60, 0, 1, (byte)'b']);
        byte[] filter = "sensors/+/temperature"u8.ToArray();
        byte[] subscribe = Level == 5
            ? [0x82, (byte)(6 + filter.Length), 0, 1, 0, 0, (byte)filter.Length, .. filter, 0]
            : [0x82, (byte)(5 + filter.Length), 0, 1, 0, (byte)filter.Length, .. filter, 0];
        Send(subscribe);
        WaitFor(0x90);
        publisher = bus.CreateClient();
        client = handler.Connections.Single();
        payload = new ReadOnlySequence<byte>(new byte[128]);

        // The connection's bus handlers run on this thread when the benchmark runs the drains, so their work (the
        // PUBLISH encoding) is measured; the CONNECT and SUBSCRIBE above ran before, on the thread pool.
        drains = new InlineDrains(broker.Core);
    }

    [GlobalCleanup]
    public void Cleanup()
    {
        stopping.Cancel();
        publisher.DisposeAsync().AsTask().GetAwaiter().GetResult();
        connection.DisposeAsync().AsTask().GetAwaiter().GetResult();
        broker.DisposeAsync().AsTask().GetAwaiter().GetResult();
        handler.DisposeAsync().AsTask().GetAwaiter().GetResult();
    }

    [Benchmark(OperationsPerInvoke = Batch)]
    public long DeliverQos0()
    {
        for (var i = 0; i < Batch; i++)
        {
            publisher.Publish(Subject, default, ReadOnlySequence<byte>.Empty, payload);
        }

        drains.Run();

        // The bus publisher is not an MQTT read loop: the connection flushes from the thread pool; wait for it.
        while (client.FlushPending)
        {
            Thread.SpinWait(20);
        }

        return connection.Drain();
    }

    private void Send(byte[] bytes)
    {
        var write = connection.PeerInput.WriteAsync(bytes);
        if (!write.IsCompleted)
        {
            write.AsTask().GetAwaiter().GetResult();
        }
    }

    /// <summary>Reads what the connection sent until a packet of <paramref name="type"/> (high nibble) arrives.</summary>
    private void WaitFor(byte type)
    {
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(10));
        var reader = connection.PeerOutput;
        while (true)
        {
            var result = reader.ReadAsync(timeout.Token).AsTask().GetAwaiter().GetResult();
            var found = false;
            foreach (var segment in result.Buffer)
            {
                found |= segment.Span.IndexOf(type) >= 0;
            }

            reader.AdvanceTo(result.Buffer.End);
            if (found)
            {
                return;
            }
        }
    }
}
