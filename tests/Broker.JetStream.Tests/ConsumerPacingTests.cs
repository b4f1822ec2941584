using System.Diagnostics;
using System.Text.Json.Nodes;
using NATS.Client.Core;
using NATS.Client.JetStream;
using NATS.Client.JetStream.Models;

namespace Broker.JetStream.Tests;

/// <summary>
/// <c>replay_policy: original</c> and <c>rate_limit_bps</c> through NATS.Client, timed on our broker and on nats-server
/// 2.9.10 against the same bounds: stored messages are spaced by their original gaps until the consumer catches up,
/// new ones then go out at once; a push consumer's bytes per second stay under its limit once the burst is spent.
/// </summary>
public class ConsumerPacingTests
{
    public static TheoryData<ServerKind> Servers => new() { ServerKind.Ours, ServerKind.Reference };

    [Theory(Timeout = 30_000)]
    [MemberData(nameof(Servers))]
    public async Task Replay_original_push_spaces_stored_messages_then_delivers_new_ones_at_once(ServerKind kind)
    {
        await using var server = await JetStreamServer.StartAsync(kind);
        var (connection, js) = await server.ConnectJetStreamAsync();
        await using var _ = connection;
        await js.CreateStreamAsync(new StreamConfig("R", ["r.>"]) { Storage = StreamConfigStorage.Memory });
        await PublishWithGapsAsync(js);

        await using var subscription = await connection.SubscribeCoreAsync<string>("replay.out");
        await connection.PingAsync();
        var started = Stopwatch.GetTimestamp();
        await js.CreateOrUpdateConsumerAsync("R", new ConsumerConfig
        {
            DeliverSubject = "replay.out",
            AckPolicy = ConsumerConfigAckPolicy.None,
            ReplayPolicy = ConsumerConfigReplayPolicy.Original,
        });

        var arrivals = await ReceiveAsync(subscription.Msgs, 4);
        AssertGaps(started, arrivals);

        // Caught up: a message published now is not held back by its gap to the last one.
        await Task.Delay(400);
        var published = Stopwatch.GetTimestamp();
        await js.PublishAsync("r.new", "5");
        var latest = await ReceiveAsync(subscription.Msgs, 1);
        Assert.True(Stopwatch.GetElapsedTime(published, latest[0]).TotalMilliseconds < 200, "new message delayed after catching up");
    }

    [Theory(Timeout = 30_000)]
    [MemberData(nameof(Servers))]
    public async Task Replay_original_pull_spaces_stored_messages_within_a_fetch(ServerKind kind)
    {
        await using var server = await JetStreamServer.StartAsync(kind);
        var (connection, js) = await server.ConnectJetStreamAsync();
        await using var _ = connection;
        await js.CreateStreamAsync(new StreamConfig("R", ["r.>"]) { Storage = StreamConfigStorage.Memory });
        await PublishWithGapsAsync(js);
        var consumer = await js.CreateOrUpdateConsumerAsync("R", new ConsumerConfig("P")
        {
            AckPolicy = ConsumerConfigAckPolicy.Explicit,
            ReplayPolicy = ConsumerConfigReplayPolicy.Original,
        });

        var arrivals = new List<long>();
        var started = Stopwatch.GetTimestamp();
        await foreach (var message in consumer.FetchAsync<string>(new NatsJSFetchOpts { MaxMsgs = 4, Expires = TimeSpan.FromSeconds(5) }))
        {
            arrivals.Add(Stopwatch.GetTimestamp());
            await message.AckAsync();
        }

        Assert.Equal(4, arrivals.Count);
        AssertGaps(started, arrivals);
    }

    [Theory(Timeout = 30_000)]
    [MemberData(nameof(Servers))]
    public async Task Rate_limited_push_consumer_stays_under_its_bits_per_second(ServerKind kind)
    {
        await using var server = await JetStreamServer.StartAsync(kind);
        var (connection, js) = await server.ConnectJetStreamAsync();
        await using var _ = connection;

        // max_msg_size is the limiter's burst: 1,000 bytes go at once, the rest at 10,000 bytes a second.
        await js.CreateStreamAsync(new StreamConfig("L", ["l.>"]) { Storage = StreamConfigStorage.Memory, MaxMsgSize = 1000 });
        var payload = new string('x', 500);
        for (var i = 0; i < 20; i++)
        {
            await js.PublishAsync("l.m", payload);
        }

        await using var subscription = await connection.SubscribeCoreAsync<string>("rate.out");
        await connection.PingAsync();
        var started = Stopwatch.GetTimestamp();
        await js.CreateOrUpdateConsumerAsync("L", new ConsumerConfig
        {
            DeliverSubject = "rate.out",
            AckPolicy = ConsumerConfigAckPolicy.None,
            RateLimitBps = 80_000,
        });

        var arrivals = await ReceiveAsync(subscription.Msgs, 20);

        // Each delivery costs about 500 + subject + ack reply (~60) bytes: ~11,000 bytes over the burst, ~1.1 s.
        var total = Stopwatch.GetElapsedTime(started, arrivals[^1]).TotalSeconds;
        Assert.InRange(total, 0.8, 3.0);
        var firstHalf = Stopwatch.GetElapsedTime(started, arrivals[9]).TotalSeconds;
        Assert.InRange(firstHalf, 0.3, 1.8);
    }

    [Theory(Timeout = 30_000)]
    [MemberData(nameof(Servers))]
    public async Task Pull_consumer_with_a_rate_limit_is_refused(ServerKind kind)
    {
        await using var server = await JetStreamServer.StartAsync(kind);
        await using var connection = server.Connect();
        await connection.ConnectAsync();
        await connection.RequestAsync<byte[], byte[]>("$JS.API.STREAM.CREATE.L", """{"name":"L","subjects":["l"],"storage":"memory"}"""u8.ToArray());
        var reply = await connection.RequestAsync<byte[], byte[]>("$JS.API.CONSUMER.CREATE.L.P", """{"stream_name":"L","config":{"name":"P","ack_policy":"explicit","rate_limit_bps":1000}}"""u8.ToArray());
        var error = JsonNode.Parse(reply.Data!)!["error"]!;
        Assert.Equal(400, (int)error["code"]!);
        Assert.Equal(10086, (int)error["err_code"]!);
        Assert.Equal("consumer in pull mode can not have rate limit set", (string?)error["description"]);
    }

    // m1, 400 ms, m2, 200 ms, m3, m4: the gaps replay must reproduce.
    private static async Task PublishWithGapsAsync(NatsJSContext js)
    {
        (await js.PublishAsync("r.a", "1")).EnsureSuccess();
        await Task.Delay(400);
        (await js.PublishAsync("r.a", "2")).EnsureSuccess();
        await Task.Delay(200);
        (await js.PublishAsync("r.a", "3")).EnsureSuccess();
        (await js.PublishAsync("r.a", "4")).EnsureSuccess();
    }

    // Measured from before the consumer was asked for the messages, not from the first arrival: on a loaded machine the
    // client may see the first message late, together with the second, though the server spaced them. The first goes
    // at once, so the second cannot arrive before 400 ms and the third before 600 ms (the lower bounds are what replay
    // guarantees); the upper bounds are loose, as a loaded machine delays any delivery.
    private static void AssertGaps(long started, List<long> arrivals)
    {
        var since = arrivals.Select(a => Stopwatch.GetElapsedTime(started, a).TotalMilliseconds).ToList();
        var text = "arrivals (ms after the request) " + string.Join(", ", since.Select(g => g.ToString("0", System.Globalization.CultureInfo.InvariantCulture)));
        Assert.True(since[1] is > 350 and < 2500, text);
        Assert.True(since[2] is > 550 and < 3000, text);
        Assert.True(since[3] - since[2] < 350, text);
    }

    private static async Task<List<long>> ReceiveAsync(System.Threading.Channels.ChannelReader<NatsMsg<string>> messages, int count)
    {
        var arrivals = new List<long>();
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(10));
        while (arrivals.Count < count)
        {
            var message = await messages.ReadAsync(timeout.Token);
            if (message.Headers is { Code: > 0 })
            {
                continue;
            }

            arrivals.Add(Stopwatch.GetTimestamp());
        }

        return arrivals;
    }
}
