using System.Text;
using System.Text.Json;
using Broker.TestKit;
using NATS.Client.Core;

namespace Broker.JetStream.Tests;

/// <summary>
/// The create response describes the consumer as it started, before it delivered anything, however fast the stream
/// fills meanwhile: nats-server snapshots the info in <c>setLeader</c>, and a mirror in another domain takes the
/// response's delivered stream sequence as where its copy starts (a later figure there skipped a message once).
/// </summary>
public class ConsumerCreateResponseTests
{
    public static TheoryData<ServerKind> Kinds => new() { ServerKind.Ours, ServerKind.Reference };

    [Theory(Timeout = 60_000)]
    [MemberData(nameof(Kinds))]
    public async Task A_push_consumer_created_while_messages_arrive_reports_nothing_delivered_yet(ServerKind kind)
    {
        await using var server = await JetStreamServer.StartAsync(kind);
        await using var connection = server.Connect();
        await using var publisher = server.Connect();
        await RequestAsync(connection, "$JS.API.STREAM.CREATE.S", """{"name":"S","subjects":["s.>"],"storage":"memory","max_msgs":2000}""");

        // A subscriber on every deliver subject, so each consumer is bound and delivers as soon as it can.
        await using var deliveries = await connection.SubscribeCoreAsync<byte[]>("dlv.>");
        using var stop = new CancellationTokenSource();
        var publishing = Task.Run(async () =>
        {
            while (!stop.IsCancellationRequested)
            {
                await publisher.PublishAsync("s.x", "m"u8.ToArray());
            }
        });
        var drain = Task.Run(async () =>
        {
            await foreach (var _ in deliveries.Msgs.ReadAllAsync(stop.Token).ConfigureAwait(false))
            {
            }
        });

        try
        {
            await Eventually.AssertAsync(async () => StreamMessages(await RequestAsync(connection, "$JS.API.STREAM.INFO.S", "")) > 100, "the stream fills");
            for (var i = 0; i < 40; i++)
            {
                var body = $$$"""{"stream_name":"S","config":{"deliver_subject":"dlv.{{{i}}}","deliver_policy":"all","ack_policy":"none"}}""";
                var reply = await RequestAsync(connection, "$JS.API.CONSUMER.CREATE.S", body);
                Assert.False(reply.TryGetProperty("error", out var error), error.ToString());
                Assert.Equal(0UL, reply.GetProperty("delivered").GetProperty("consumer_seq").GetUInt64());
                await RequestAsync(connection, $"$JS.API.CONSUMER.DELETE.S.{reply.GetProperty("name").GetString()}", "");
            }
        }
        finally
        {
            await stop.CancelAsync();
            await publishing;
            await drain.ContinueWith(_ => { }, TaskScheduler.Default);
        }
    }

    private static long StreamMessages(JsonElement info) => info.GetProperty("state").GetProperty("messages").GetInt64();

    private static async Task<JsonElement> RequestAsync(NatsConnection connection, string subject, string body)
    {
        var reply = await connection.RequestAsync<byte[], byte[]>(subject, Encoding.UTF8.GetBytes(body));
        return JsonDocument.Parse(reply.Data!).RootElement.Clone();
    }
}
