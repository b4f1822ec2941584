using System.Buffers;
using System.Text;
using BenchmarkDotNet.Attributes;
using Broker.Adapters.Mqtt.Internal.Codec;
using MQTTnet.Adapter;
using MQTTnet.Formatter;
using MQTTnet.Packets;

namespace Broker.Benchmarks.Mqtt;

/// <summary>
/// The MQTT wire codec decision (issue 12 item 7): the adapter's own codec against MQTTnet 5.2's public packet
/// formatter (<c>MqttPacketFormatterAdapter</c> over <c>MqttBufferWriter</c>) on the delivery path (a 128-byte QoS 0
/// PUBLISH of a NATS message on <c>sensors.kitchen.temperature</c>, written into a reused output) and on the receive
/// path (decoding a PUBLISH). MQTTnet is given every advantage it can have: one reused packet object, the topic string
/// made once (<c>...CachedTopic</c>) or per message as the broker would have to (<c>...Topic</c>).
/// </summary>
[MemoryDiagnoser]
public class MqttCodecBenchmarks
{
    public const int Batch = 64;

    private static readonly byte[] Subject = "sensors.kitchen.temperature"u8.ToArray();

    private readonly ArrayBufferWriter<byte> output = new(64 * 1024);
    private readonly MqttPublishPacket packet = new();
    private ReadOnlySequence<byte> payload;
    private MqttPacketFormatterAdapter formatter = null!;
    private string cachedTopic = null!;
    private byte[] publishBody = null!;
    private byte publishHeader;

    [GlobalSetup]
    public void Setup()
    {
        payload = new ReadOnlySequence<byte>(new byte[128]);
        formatter = new MqttPacketFormatterAdapter(MqttProtocolVersion.V311, new MqttBufferWriter(4096, 65535));
        cachedTopic = "sensors/kitchen/temperature";

        // The PUBLISH a client sends: decoded by both codecs.
        PublishEncoder.WriteV3(output, Subject, payload, retain: false);
        var encoded = output.WrittenSpan.ToArray();
        output.Clear();
        publishHeader = encoded[0];
        publishBody = encoded[3..];
    }

    [Benchmark(OperationsPerInvoke = Batch)]
    public long OwnEncodeQos0()
    {
        output.Clear();
        for (var i = 0; i < Batch; i++)
        {
            PublishEncoder.WriteV3(output, Subject, payload, retain: false);
        }

        return output.WrittenCount;
    }

    [Benchmark(OperationsPerInvoke = Batch)]
    public long MqttnetEncodeQos0Topic()
    {
        output.Clear();
        for (var i = 0; i < Batch; i++)
        {
            // The broker holds a subject; MQTTnet needs the topic as a string.
            packet.Topic = Encoding.UTF8.GetString(Subject).Replace('.', '/');
            EncodeWithMqttnet();
        }

        return output.WrittenCount;
    }

    [Benchmark(OperationsPerInvoke = Batch)]
    public long MqttnetEncodeQos0CachedTopic()
    {
        output.Clear();
        for (var i = 0; i < Batch; i++)
        {
            packet.Topic = cachedTopic;
            EncodeWithMqttnet();
        }

        return output.WrittenCount;
    }

    [Benchmark(OperationsPerInvoke = Batch)]
    public long OwnDecodePublish()
    {
        long total = 0;
        for (var i = 0; i < Batch; i++)
        {
            var decoded = PublishPacket.Parse((byte)(publishHeader & 0x0F), publishBody, v5: false);
            total += decoded.Topic.Length + decoded.Payload.Length;
        }

        return total;
    }

    [Benchmark(OperationsPerInvoke = Batch)]
    public long MqttnetDecodePublish()
    {
        long total = 0;
        for (var i = 0; i < Batch; i++)
        {
            var decoded = (MqttPublishPacket)formatter.Decode(new ReceivedMqttPacket(publishHeader, new ArraySegment<byte>(publishBody), publishBody.Length + 3));
            total += decoded.Topic.Length + decoded.Payload.Length;
        }

        return total;
    }

    private void EncodeWithMqttnet()
    {
        packet.Payload = payload;
        var buffer = formatter.Encode(packet);
        output.Write(buffer.Packet.AsSpan());
        foreach (var segment in buffer.Payload)
        {
            output.Write(segment.Span);
        }
    }
}
