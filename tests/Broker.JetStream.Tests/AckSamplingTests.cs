using System.Text.Json.Nodes;
using NATS.Client.Core;
using NATS.Client.JetStream.Models;

namespace Broker.JetStream.Tests;

/// <summary><c>sample_freq</c>: acknowledgements published as ack metrics, on our broker and nats-server 2.9.10 alike.</summary>
public class AckSamplingTests
{
    public static TheoryData<ServerKind> Servers => new() { ServerKind.Ours, ServerKind.Reference };

    [Theory(Timeout = 30_000)]
    [MemberData(nameof(Servers))]
    public async Task Sampled_acks_are_published_as_consumer_ack_metrics(ServerKind kind)
    {
        await using var server = await JetStreamServer.StartAsync(kind);
        var (connection, js) = await server.ConnectJetStreamAsync();
        await using var _ = connection;
        await js.CreateStreamAsync(new StreamConfig("S", ["s"]) { Storage = StreamConfigStorage.Memory });
        await js.PublishAsync("s", "one");
        await js.PublishAsync("s", "two");
        var sampled = await js.CreateOrUpdateConsumerAsync("S", new ConsumerConfig("C") { AckPolicy = ConsumerConfigAckPolicy.Explicit, SampleFreq = "100%" });
        var unsampled = await js.CreateOrUpdateConsumerAsync("S", new ConsumerConfig("U") { AckPolicy = ConsumerConfigAckPolicy.Explicit });
        await using var metrics = await connection.SubscribeCoreAsync<byte[]>("$JS.EVENT.METRIC.CONSUMER.ACK.S.*");
        await connection.PingAsync();

        await (await unsampled.NextAsync<string>())!.AckAsync();
        var first = await sampled.NextAsync<string>();
        await Task.Delay(100);
        await first!.AckAsync();

        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(5));
        var metric = await metrics.Msgs.ReadAsync(timeout.Token);
        Assert.Equal("$JS.EVENT.METRIC.CONSUMER.ACK.S.C", metric.Subject);
        var json = JsonNode.Parse(metric.Data!)!;
        Assert.Equal("io.nats.jetstream.metric.v1.consumer_ack", (string?)json["type"]);
        Assert.Equal("S", (string?)json["stream"]);
        Assert.Equal("C", (string?)json["consumer"]);
        Assert.Equal(1UL, (ulong)json["consumer_seq"]!);
        Assert.Equal(1UL, (ulong)json["stream_seq"]!);
        Assert.Equal(1UL, (ulong)json["deliveries"]!);
        Assert.InRange((long)json["ack_time"]!, 50_000_000L, 5_000_000_000L);
        Assert.Equal(["type", "id", "timestamp", "stream", "consumer", "consumer_seq", "stream_seq", "ack_time", "deliveries"], json.AsObject().Select(p => p.Key));

        // The unsampled consumer's ack published nothing.
        await Task.Delay(200);
        Assert.False(metrics.Msgs.TryRead(out var extra), extra.Subject);
    }
}
