using System.Text;
using System.Text.Json.Nodes;
using Broker.Storage.FileStore;
using NATS.Client.Core;
using NATS.Client.JetStream;
using NATS.Client.JetStream.Models;

namespace Broker.JetStream.Tests;

/// <summary>
/// Consumer pause and resume (nats-server 2.11, ADR-48): <c>pause_until</c> in the consumer configuration and
/// <c>$JS.API.CONSUMER.PAUSE.&lt;stream&gt;.&lt;consumer&gt;</c>. nats-server 2.9.10 has neither (it drops the field and
/// does not answer the subject), so these follow 2.11.17's <c>jsConsumerPauseRequest</c>, <c>updatePauseState</c> and
/// <c>loopAndGatherMsgs</c>: nothing is delivered while paused (a pull request waits and times out with 408, a no-wait
/// one ends with 404), delivery resumes at the deadline by itself, the response and the error replies carry
/// <c>paused</c> and <c>pause_until</c>, an update through create keeps the running pause, and the pause advisory goes
/// out on each change and at the end. Through NATS.Client.JetStream 3.3.2 (which has the pause calls) and raw requests.
/// </summary>
public sealed class ConsumerPauseTests
{
    private const string Zero = "0001-01-01T00:00:00Z";

    [Fact(Timeout = 30_000)]
    public async Task A_paused_pull_consumer_answers_no_request_until_resumed()
    {
        await using var server = await JetStreamServer.StartAsync();
        var (connection, js) = await server.ConnectJetStreamAsync();
        await using var _ = connection;
        await js.CreateStreamAsync(new StreamConfig("S", ["s"]) { Storage = StreamConfigStorage.Memory });
        for (var i = 1; i <= 3; i++)
        {
            (await js.PublishAsync("s", $"m{i}")).EnsureSuccess();
        }

        var until = DateTimeOffset.UtcNow.AddHours(1);
        var consumer = await js.CreateOrUpdateConsumerAsync("S", new ConsumerConfig("C") { AckPolicy = ConsumerConfigAckPolicy.Explicit, PauseUntil = until });
        Assert.True(consumer.Info.IsPaused);
        Assert.InRange(consumer.Info.PauseRemaining!.Value, TimeSpan.FromMinutes(59), TimeSpan.FromHours(1));
        Assert.Equal(until.ToUnixTimeMilliseconds(), consumer.Info.Config.PauseUntil!.Value.ToUnixTimeMilliseconds());

        // A request with an expiry waits and times out with nothing delivered; a no-wait request ends at once.
        Assert.Equal((408, "Request Timeout"), await PullStatusAsync(connection, """{"batch":1,"expires":300000000}"""));
        Assert.Equal((404, "No Messages"), await PullStatusAsync(connection, """{"batch":1,"no_wait":true}"""));
        Assert.Equal(3UL, (await js.GetConsumerAsync("S", "C")).Info.NumPending);

        // A request waiting when the consumer resumes gets the first message.
        var fetch = Task.Run(async () => await consumer.NextAsync<string>(opts: new NatsJSNextOpts { Expires = TimeSpan.FromSeconds(10) }));
        await Eventually.AssertAsync(async () => (await js.GetConsumerAsync("S", "C")).Info.NumWaiting == 1, "the pull request to wait");
        Assert.True(await js.ResumeConsumerAsync("S", "C"));
        Assert.Equal("m1", (await fetch)!.Data);

        var info = (await js.GetConsumerAsync("S", "C")).Info;
        Assert.False(info.IsPaused);
        Assert.Null(info.Config.PauseUntil);
    }

    [Fact(Timeout = 30_000)]
    public async Task A_push_consumer_resumes_by_itself_at_its_deadline_with_advisories()
    {
        await using var server = await JetStreamServer.StartAsync();
        var (connection, js) = await server.ConnectJetStreamAsync();
        await using var _ = connection;
        await js.CreateStreamAsync(new StreamConfig("S", ["s"]) { Storage = StreamConfigStorage.Memory });
        await using var advisories = await connection.SubscribeCoreAsync<string>("$JS.EVENT.ADVISORY.CONSUMER.PAUSE.S.P");
        await using var deliveries = await connection.SubscribeCoreAsync<string>("deliver.p");
        await connection.PingAsync();
        await js.CreateOrUpdateConsumerAsync("S", new ConsumerConfig("P") { DeliverSubject = "deliver.p", AckPolicy = ConsumerConfigAckPolicy.None });

        var until = DateTimeOffset.UtcNow.AddMilliseconds(1500);
        var paused = await js.PauseConsumerAsync("S", "P", until);
        Assert.True(paused.IsPaused);
        Assert.Equal(until.ToUnixTimeMilliseconds(), paused.PauseUntil.ToUnixTimeMilliseconds());
        Assert.InRange(paused.PauseRemaining!.Value, TimeSpan.FromMilliseconds(1), TimeSpan.FromMilliseconds(1500));
        var pausedAdvisory = JsonNode.Parse((await advisories.NextAsync()).Data!)!;
        Assert.Equal(("io.nats.jetstream.advisory.v1.consumer_pause", "S", "P", true), ((string?)pausedAdvisory["type"], (string?)pausedAdvisory["stream"], (string?)pausedAdvisory["consumer"], (bool)pausedAdvisory["paused"]!));
        Assert.Equal(until.ToUnixTimeMilliseconds(), DateTimeOffset.Parse((string)pausedAdvisory["pause_until"]!, System.Globalization.CultureInfo.InvariantCulture).ToUnixTimeMilliseconds());

        (await js.PublishAsync("s", "held")).EnsureSuccess();
        var delivered = await deliveries.NextAsync(TimeSpan.FromSeconds(10));
        var at = DateTimeOffset.UtcNow;
        Assert.Equal("held", delivered.Data);
        Assert.True(at >= until, $"delivered at {at:O}, before the pause ended at {until:O}");

        var resumed = JsonNode.Parse((await advisories.NextAsync()).Data!)!;
        Assert.False((bool)resumed["paused"]!);
        Assert.False((await js.GetConsumerAsync("S", "P")).Info.IsPaused);
    }

    [Fact(Timeout = 30_000)]
    public async Task The_pause_api_answers_as_nats_server_2_11()
    {
        await using var server = await JetStreamServer.StartAsync();
        await using var connection = server.Connect();
        await connection.ConnectAsync();
        Assert.Null((await RequestAsync(connection, "$JS.API.STREAM.CREATE.S", """{"name":"S","storage":"memory"}"""))["error"]);
        Assert.Null((await RequestAsync(connection, "$JS.API.CONSUMER.CREATE.S.C", """{"stream_name":"S","config":{"name":"C","ack_policy":"explicit"}}"""))["error"]);

        Assert.Equal(
            """{"type":"io.nats.jetstream.api.v1.consumer_pause_response","error":{"code":404,"err_code":10059,"description":"stream not found"},"paused":false,"pause_until":"0001-01-01T00:00:00Z"}""",
            await RequestTextAsync(connection, "$JS.API.CONSUMER.PAUSE.X.C", ""));
        Assert.Equal(
            """{"type":"io.nats.jetstream.api.v1.consumer_pause_response","error":{"code":404,"err_code":10014,"description":"consumer not found"},"paused":false,"pause_until":"0001-01-01T00:00:00Z"}""",
            await RequestTextAsync(connection, "$JS.API.CONSUMER.PAUSE.S.X", """{"pause_until":"2099-01-01T00:00:00Z"}"""));
        Assert.Equal(10025, (int)(await RequestAsync(connection, "$JS.API.CONSUMER.PAUSE.S.C", """{"pause_until":"""))["error"]!["err_code"]!);

        // A time with an offset is kept in UTC; the consumer info says paused with the time left.
        var paused = await RequestAsync(connection, "$JS.API.CONSUMER.PAUSE.S.C", """{"pause_until":"2099-01-01T02:00:00.5+02:00"}""");
        Assert.Null(paused["error"]);
        Assert.Equal((true, "2099-01-01T00:00:00.5Z"), ((bool)paused["paused"]!, (string?)paused["pause_until"]));
        Assert.True((long)paused["pause_remaining"]! > 0);
        var info = await RequestAsync(connection, "$JS.API.CONSUMER.INFO.S.C", "");
        Assert.Equal((true, "2099-01-01T00:00:00.5Z"), ((bool)info["paused"]!, (string?)info["config"]!["pause_until"]));
        Assert.True((long)info["pause_remaining"]! > 0);

        // An update through create keeps the running pause, whatever it says.
        var updated = await RequestAsync(connection, "$JS.API.CONSUMER.CREATE.S.C", """{"stream_name":"S","config":{"name":"C","ack_policy":"explicit","description":"d","pause_until":"2001-01-01T00:00:00Z"}}""");
        Assert.Null(updated["error"]);
        Assert.Equal(("d", "2099-01-01T00:00:00.5Z", true), ((string?)updated["config"]!["description"], (string?)updated["config"]!["pause_until"], (bool)updated["paused"]!));

        // A past time is kept but does not pause; an empty body (not a JSON object) resumes and clears it.
        Assert.Equal(
            """{"type":"io.nats.jetstream.api.v1.consumer_pause_response","paused":false,"pause_until":"2001-01-01T00:00:00Z"}""",
            await RequestTextAsync(connection, "$JS.API.CONSUMER.PAUSE.S.C", """{"pause_until":"2001-01-01T00:00:00Z"}"""));
        info = await RequestAsync(connection, "$JS.API.CONSUMER.INFO.S.C", "");
        Assert.Equal(("2001-01-01T00:00:00Z", null, null), ((string?)info["config"]!["pause_until"], info["paused"], info["pause_remaining"]));
        Assert.Equal(
            """{"type":"io.nats.jetstream.api.v1.consumer_pause_response","paused":false,"pause_until":"0001-01-01T00:00:00Z"}""",
            await RequestTextAsync(connection, "$JS.API.CONSUMER.PAUSE.S.C", ""));
        Assert.Null((await RequestAsync(connection, "$JS.API.CONSUMER.INFO.S.C", ""))["config"]!["pause_until"]);

        // Go's zero time in a create is kept as nats-server keeps it, and does not pause.
        var zero = await RequestAsync(connection, "$JS.API.CONSUMER.CREATE.S.Z", $$$"""{"stream_name":"S","config":{"name":"Z","ack_policy":"explicit","pause_until":"{{{Zero}}}"}}""");
        Assert.Equal((Zero, null), ((string?)zero["config"]!["pause_until"], zero["paused"]));
    }

    [Fact(Timeout = 60_000)]
    public async Task A_pause_survives_a_restart_of_the_file_store()
    {
        using var store = new TempDirectory("js-pause-");
        var until = DateTimeOffset.UtcNow.AddHours(1);
        for (var run = 1; run <= 2; run++)
        {
            await using var broker = await TestBroker.StartAsync(plugins: [new JetStreamPlugin(new JetStreamOptions { StoreDirectory = store.Path }), new FileStorePlugin(new FileStoreOptions())]);
            await using var connection = await NatsClients.ConnectAsync(broker.Url);
            var js = new NatsJSContext(connection);
            if (run == 1)
            {
                await js.CreateStreamAsync(new StreamConfig("F", ["f"]) { Storage = StreamConfigStorage.File });
                (await js.PublishAsync("f", "kept")).EnsureSuccess();
                await js.CreateOrUpdateConsumerAsync("F", new ConsumerConfig("D") { AckPolicy = ConsumerConfigAckPolicy.Explicit });
                Assert.True((await js.PauseConsumerAsync("F", "D", until)).IsPaused);
                continue;
            }

            var consumer = await js.GetConsumerAsync("F", "D");
            Assert.True(consumer.Info.IsPaused);
            Assert.Equal(until.ToUnixTimeMilliseconds(), consumer.Info.Config.PauseUntil!.Value.ToUnixTimeMilliseconds());
            Assert.Equal((408, "Request Timeout"), await PullStatusAsync(connection, """{"batch":1,"expires":300000000}""", "F", "D"));

            Assert.True(await js.ResumeConsumerAsync("F", "D"));
            var next = await consumer.NextAsync<string>(opts: new NatsJSNextOpts { Expires = TimeSpan.FromSeconds(5) });
            Assert.Equal("kept", next!.Data);
        }
    }

    /// <summary>Sends a pull request with its own inbox and returns the status of the first reply (a message would be 0).</summary>
    private static async Task<(int Code, string Text)> PullStatusAsync(NatsConnection connection, string body, string stream = "S", string consumer = "C")
    {
        var inbox = connection.NewInbox();
        await using var replies = await connection.SubscribeCoreAsync<string>(inbox);
        await connection.PingAsync();
        await connection.PublishAsync($"$JS.API.CONSUMER.MSG.NEXT.{stream}.{consumer}", body, replyTo: inbox);
        var reply = await replies.NextAsync(TimeSpan.FromSeconds(10));
        return (reply.Headers?.Code ?? 0, reply.Headers?.MessageText ?? "");
    }

    private static async Task<string> RequestTextAsync(NatsConnection connection, string subject, string body)
    {
        var reply = await connection.RequestAsync<byte[], byte[]>(subject, Encoding.UTF8.GetBytes(body));
        return Encoding.UTF8.GetString(reply.Data!);
    }

    private static async Task<JsonNode> RequestAsync(NatsConnection connection, string subject, string body) =>
        JsonNode.Parse(await RequestTextAsync(connection, subject, body))!;
}
