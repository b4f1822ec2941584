using System.Text;
using NATS.Client.Core;
using NATS.Client.JetStream;
using NATS.Client.JetStream.Models;

namespace Broker.JetStream.Tests;

/// <summary>
/// A pull request's <c>max_bytes</c> is charged what nats-server charges a delivery (subject, ack reply, headers and
/// payload), so a fetch gets the same number of messages from both servers: nats.c's JetStreamSubscribePull asks for
/// 150 bytes of 10-byte messages on "bat" and expects exactly 2.
/// </summary>
public class PullMaxBytesTests
{
    public static TheoryData<ServerKind> Servers => new() { ServerKind.Ours, ServerKind.Reference };

    [Theory(Timeout = 30_000)]
    [MemberData(nameof(Servers))]
    public async Task Max_bytes_counts_subject_ack_reply_and_payload(ServerKind kind)
    {
        await using var server = await JetStreamServer.StartAsync(kind);
        var (connection, js) = await server.ConnectJetStreamAsync();
        await using var _ = connection;
        await js.CreateStreamAsync(new StreamConfig("TEST", ["bat"]) { Storage = StreamConfigStorage.Memory });
        await js.CreateOrUpdateConsumerAsync("TEST", new ConsumerConfig("dur") { AckPolicy = ConsumerConfigAckPolicy.Explicit });
        for (var i = 0; i < 10; i++)
        {
            (await js.PublishAsync("bat", Encoding.ASCII.GetBytes("abcdefghij"))).EnsureSuccess();
        }

        var consumer = await js.GetConsumerAsync("TEST", "dur");
        var sizes = new List<int>();
        await foreach (var message in consumer.FetchAsync<byte[]>(new NatsJSFetchOpts { MaxBytes = 150, Expires = TimeSpan.FromSeconds(2) }))
        {
            sizes.Add(message.Subject.Length + message.ReplyTo!.Length + (message.Data?.Length ?? 0));
        }

        Assert.True(sizes.Count == 2, $"sizes {string.Join(",", sizes)}");
        Assert.True(sizes.Sum() <= 150, $"{sizes.Sum()} bytes");
    }
}
