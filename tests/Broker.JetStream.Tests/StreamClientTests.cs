using NATS.Client.JetStream;
using NATS.Client.JetStream.Models;

namespace Broker.JetStream.Tests;

/// <summary>Streams through NATS.Client.JetStream 3.3.2: create, publish, info, get, purge, delete.</summary>
public class StreamClientTests
{
    [Fact(Timeout = 30_000)]
    public async Task Publish_to_a_memory_stream_is_acknowledged_with_its_sequence()
    {
        await using var server = await JetStreamServer.StartAsync();
        var (connection, js) = await server.ConnectJetStreamAsync();
        await using var _ = connection;

        var stream = await js.CreateStreamAsync(new StreamConfig("ORDERS", ["orders.*"]) { Storage = StreamConfigStorage.Memory });
        Assert.Equal("ORDERS", stream.Info.Config.Name);

        for (var i = 1; i <= 3; i++)
        {
            var ack = await js.PublishAsync("orders.new", $"order {i}");
            ack.EnsureSuccess();
            Assert.Equal("ORDERS", ack.Stream);
            Assert.Equal((ulong)i, ack.Seq);
        }

        await stream.RefreshAsync();
        Assert.Equal(3L, stream.Info.State.Messages);
        Assert.Equal(1UL, stream.Info.State.FirstSeq);
        Assert.Equal(3UL, stream.Info.State.LastSeq);
    }
}
