using System.Text;
using System.Text.Json.Nodes;
using NATS.Client.Core;
using NATS.Client.JetStream;
using NATS.Client.JetStream.Models;

namespace Broker.JetStream.Tests;

/// <summary>
/// Priority groups (nats-server 2.11, ADR-42): a pull consumer's <c>priority_groups</c>, <c>priority_policy</c>
/// (<c>overflow</c>, <c>pinned_client</c>) and <c>priority_timeout</c>, the pull request's <c>group</c>,
/// <c>min_pending</c>, <c>min_ack_pending</c> and <c>id</c>, <c>Nats-Pin-Id</c>, <c>$JS.API.CONSUMER.UNPIN</c> and the
/// pinned / unpinned advisories. nats-server 2.9.10 has none of it and no 2.11 binary is here, so these run on our broker
/// only and follow 2.11.17's source (<c>checkConsumerCfg</c>, <c>processNextMsgRequest</c>, <c>nextWaiting</c>,
/// <c>jsConsumerUnpinRequest</c>, errors.json): error codes, texts and statuses are 2.11's. Through NATS.Client.JetStream
/// 3.3.2 where it has the calls (consume with a priority group, fetch with overflow minimums, unpin) and raw requests.
/// </summary>
public sealed class PriorityGroupTests
{
    private const string Zero = "0001-01-01T00:00:00Z";

    [Fact(Timeout = 30_000)]
    public async Task The_configuration_is_checked_and_echoed_as_nats_server_2_11()
    {
        await using var server = await JetStreamServer.StartAsync();
        await using var connection = server.Connect();
        await connection.ConnectAsync();
        Assert.Null((await RequestAsync(connection, "$JS.API.STREAM.CREATE.S", """{"name":"S","subjects":["s"],"storage":"memory"}"""))["error"]);

        foreach (var (config, code, text) in new[]
        {
            ("\"priority_policy\":\"pinned_client\"", 10159, "Setting PriorityPolicy requires at least one PriorityGroup to be set"),
            ("\"priority_policy\":\"overflow\",\"priority_groups\":[\"\"]", 10161, "Group name cannot be an empty string"),
            ("\"priority_policy\":\"overflow\",\"priority_groups\":[\"a-very-long-group-name\"]", 10162, "Valid priority group name must match A-Z, a-z, 0-9, -_/=)+ and may not exceed 16 characters"),
            ("\"priority_policy\":\"overflow\",\"priority_groups\":[\"a b\"]", 10162, "Valid priority group name must match A-Z, a-z, 0-9, -_/=)+ and may not exceed 16 characters"),
            ("\"priority_policy\":\"pinned_client\",\"priority_groups\":[\"jobs\"],\"deliver_subject\":\"out\"", 10178, "priority groups can not be used with push consumers"),
        })
        {
            var refused = await RequestAsync(connection, "$JS.API.CONSUMER.CREATE.S.C", $$$"""{"stream_name":"S","config":{"name":"C","ack_policy":"explicit",{{{config}}}}}""");
            Assert.Equal((400, code, text), ((int)refused["error"]!["code"]!, (int)refused["error"]!["err_code"]!, (string?)refused["error"]!["description"]));
        }

        // 2.11 has no "prioritized" (2.12's): an unknown policy does not parse.
        var unknown = await RequestAsync(connection, "$JS.API.CONSUMER.CREATE.S.C", """{"stream_name":"S","config":{"name":"C","ack_policy":"explicit","priority_policy":"prioritized","priority_groups":["jobs"]}}""");
        Assert.Equal(10025, (int)unknown["error"]!["err_code"]!);
        Assert.Equal(0, (int)(await RequestAsync(connection, "$JS.API.STREAM.INFO.S", ""))["state"]!["consumer_count"]!);

        // pinned_client gets the default priority_timeout (2 minutes); the info reports the group, nobody pinned.
        var pinned = await RequestAsync(connection, "$JS.API.CONSUMER.CREATE.S.P", """{"stream_name":"S","config":{"name":"P","ack_policy":"explicit","priority_policy":"pinned_client","priority_groups":["jobs"]}}""");
        Assert.Null(pinned["error"]);
        Assert.Equal(("pinned_client", 120_000_000_000L, "jobs"), ((string?)pinned["config"]!["priority_policy"], (long)pinned["config"]!["priority_timeout"]!, (string?)pinned["config"]!["priority_groups"]![0]));
        Assert.Equal($$"""[{"group":"jobs","pinned_ts":"{{Zero}}"}]""", pinned["priority_groups"]!.ToJsonString());

        // Groups without a policy are kept (and reported) but change nothing; a push consumer may have them.
        var plain = await RequestAsync(connection, "$JS.API.CONSUMER.CREATE.S.G", """{"stream_name":"S","config":{"name":"G","ack_policy":"explicit","priority_groups":["jobs"],"deliver_subject":"out"}}""");
        Assert.Null(plain["error"]);
        Assert.Null(plain["config"]!["priority_policy"]);
        Assert.Null(plain["config"]!["priority_timeout"]);
        Assert.Equal("jobs", (string?)plain["priority_groups"]![0]!["group"]);

        // An update may change the policy and the timeout.
        var updated = await RequestAsync(connection, "$JS.API.CONSUMER.CREATE.S.P", """{"stream_name":"S","config":{"name":"P","ack_policy":"explicit","priority_policy":"overflow","priority_groups":["jobs","more"],"priority_timeout":5000000000}}""");
        Assert.Null(updated["error"]);
        Assert.Equal(("overflow", 5_000_000_000L, 2), ((string?)updated["config"]!["priority_policy"], (long)updated["config"]!["priority_timeout"]!, updated["config"]!["priority_groups"]!.AsArray().Count));
    }

    [Fact(Timeout = 30_000)]
    public async Task Pull_requests_are_checked_against_the_groups_with_2_11s_statuses()
    {
        await using var server = await JetStreamServer.StartAsync();
        await using var connection = server.Connect();
        await connection.ConnectAsync();
        await CreateConsumersAsync(connection);

        Assert.Equal((400, "Bad Request - Priority Group missing"), Status(await PullAsync(connection, "P", """{"batch":1,"expires":1000000000}""")));
        Assert.Equal((400, "Bad Request - Invalid Priority Group"), Status(await PullAsync(connection, "P", """{"batch":1,"group":"other"}""")));
        Assert.Equal((400, "Bad Request - Not a Overflow Priority consumer"), Status(await PullAsync(connection, "P", """{"batch":1,"group":"jobs","min_pending":1}""")));
        Assert.Equal((400, "Bad Request - Not a Pinned Client Priority consumer"), Status(await PullAsync(connection, "O", """{"batch":1,"group":"jobs","id":"x"}""")));
        Assert.Equal((400, "Bad Request - Not a Pinned Client Priority consumer"), Status(await PullAsync(connection, "N", """{"batch":1,"id":"x"}""")));
        Assert.Equal((400, "Bad Request - Not a Overflow Priority consumer"), Status(await PullAsync(connection, "N", """{"batch":1,"min_ack_pending":1}""")));

        // A consumer without a policy ignores the group, as 2.11 does.
        await connection.PublishAsync("s", "one");
        var plain = await PullAsync(connection, "N", """{"batch":1,"group":"anything","expires":5000000000}""");
        Assert.Equal("one", plain.Data);
        Assert.False(plain.Headers?.ContainsKey("Nats-Pin-Id") ?? false);

        // The first request served is pinned: its message carries the pin id, which the consumer info reports.
        var first = await PullAsync(connection, "P", """{"batch":1,"group":"jobs","expires":5000000000}""");
        Assert.Equal("one", first.Data);
        var pin = first.Headers!["Nats-Pin-Id"].ToString();
        Assert.Equal(22, pin.Length);
        var info = await RequestAsync(connection, "$JS.API.CONSUMER.INFO.S.P", "");
        Assert.Equal(("jobs", pin), ((string?)info["priority_groups"]![0]!["group"], (string?)info["priority_groups"]![0]!["pinned_client_id"]));
        Assert.NotEqual(Zero, (string?)info["priority_groups"]![0]!["pinned_ts"]);

        // Another id is refused at once; a request without an id waits (here until it expires) while the pin holds.
        Assert.Equal((423, "Nats-Pin-Id mismatch"), Status(await PullAsync(connection, "P", """{"batch":1,"group":"jobs","id":"someone-else"}""")));
        await connection.PublishAsync("s", "two");
        Assert.Equal((408, "Request Timeout"), Status(await PullAsync(connection, "P", """{"batch":1,"group":"jobs","expires":300000000}""")));
        var again = await PullAsync(connection, "P", $$"""{"batch":1,"group":"jobs","id":"{{pin}}","expires":5000000000}""");
        Assert.Equal(("two", pin), (again.Data, again.Headers!["Nats-Pin-Id"].ToString()));
    }

    [Fact(Timeout = 30_000)]
    public async Task Overflow_requests_are_served_only_above_their_minimums()
    {
        await using var server = await JetStreamServer.StartAsync();
        var (connection, js) = await server.ConnectJetStreamAsync();
        await using var _ = connection;
        await js.CreateStreamAsync(new StreamConfig("S", ["s"]) { Storage = StreamConfigStorage.Memory });
        var consumer = await js.CreateOrUpdateConsumerAsync("S", new ConsumerConfig("O")
        {
            AckPolicy = ConsumerConfigAckPolicy.Explicit,
            PriorityPolicy = ConsumerConfigPriorityPolicy.Overflow,
            PriorityGroups = ["jobs"],
        });
        for (var i = 1; i <= 3; i++)
        {
            (await js.PublishAsync("s", $"m{i}")).EnsureSuccess();
        }

        // 3 pending: a request wanting at least 5 gets nothing; one wanting 2 gets messages while 2 or more are pending.
        Assert.Empty(await FetchAsync(consumer, new NatsJSPriorityGroupOpts { Group = "jobs", MinPending = 5 }, 3));
        Assert.Equal(["m1", "m2"], await FetchAsync(consumer, new NatsJSPriorityGroupOpts { Group = "jobs", MinPending = 2 }, 3));

        // 2 unacknowledged: a request wanting 3 awaiting acks gets nothing; one wanting 2 gets the rest.
        Assert.Empty(await FetchAsync(consumer, new NatsJSPriorityGroupOpts { Group = "jobs", MinAckPending = 3 }, 3));
        Assert.Equal(["m3"], await FetchAsync(consumer, new NatsJSPriorityGroupOpts { Group = "jobs", MinAckPending = 2 }, 3));
        Assert.Equal(3, (await js.GetConsumerAsync("S", "O")).Info.NumAckPending);
    }

    [Fact(Timeout = 60_000)]
    public async Task A_pinned_client_gets_everything_until_unpinned()
    {
        await using var server = await JetStreamServer.StartAsync();
        var (connection, js) = await server.ConnectJetStreamAsync();
        await using var _ = connection;
        await js.CreateStreamAsync(new StreamConfig("S", ["s"]) { Storage = StreamConfigStorage.Memory });
        await using var pinned = await connection.SubscribeCoreAsync<string>("$JS.EVENT.ADVISORY.CONSUMER.PINNED.S.P");
        await using var unpinned = await connection.SubscribeCoreAsync<string>("$JS.EVENT.ADVISORY.CONSUMER.UNPINNED.S.P");
        await connection.PingAsync();
        await CreatePinnedAsync(js, "P", TimeSpan.FromMinutes(1));

        // Client A pulls first and is pinned; B pulls too but gets nothing while A holds the pin.
        using var stop = new CancellationTokenSource();
        var a = await ConsumeAsync(js, "P", stop.Token);
        (await js.PublishAsync("s", "first")).EnsureSuccess();
        var firstPin = (await a.Received.Reader.ReadAsync()).Pin;
        var advisory = JsonNode.Parse((await pinned.NextAsync()).Data!)!;
        Assert.Equal(
            ("io.nats.jetstream.advisory.v1.consumer_group_pinned", "$G", "S", "P", "jobs", firstPin),
            ((string?)advisory["type"], (string?)advisory["account"], (string?)advisory["stream"], (string?)advisory["consumer"], (string?)advisory["group"], (string?)advisory["pinned_id"]));

        var b = await ConsumeAsync(js, "P", stop.Token);
        await Eventually.AssertAsync(async () => (await js.GetConsumerAsync("S", "P")).Info.NumWaiting >= 2, "both clients to wait");
        for (var i = 1; i <= 5; i++)
        {
            (await js.PublishAsync("s", $"m{i}")).EnsureSuccess();
        }

        for (var i = 1; i <= 5; i++)
        {
            var (data, pin) = await a.Received.Reader.ReadAsync();
            Assert.Equal(($"m{i}", firstPin), (data, pin));
        }

        Assert.False(b.Received.Reader.TryRead(out var early), $"B got {early.Data} while A was pinned");
        var info = (await js.GetConsumerAsync("S", "P")).Info;
        Assert.Equal(firstPin, Assert.Single(info.PriorityGroups!).PinnedClientId);

        // Unpinned by the API: the advisory says admin, and the next message pins someone anew.
        await js.UnpinConsumerAsync("S", "P", "jobs");
        var admin = JsonNode.Parse((await unpinned.NextAsync()).Data!)!;
        Assert.Equal(("io.nats.jetstream.advisory.v1.consumer_group_unpinned", "jobs", "admin"), ((string?)admin["type"], (string?)admin["group"], (string?)admin["reason"]));
        (await js.PublishAsync("s", "after-unpin")).EnsureSuccess();
        var secondPin = (string?)JsonNode.Parse((await pinned.NextAsync()).Data!)!["pinned_id"];
        Assert.NotEqual(firstPin, secondPin);
        var afterUnpin = await ReadEitherAsync(a, b);
        Assert.Equal(("after-unpin", secondPin), (afterUnpin.Data, afterUnpin.Pin));
        stop.Cancel();
    }

    [Fact(Timeout = 60_000)]
    public async Task A_pin_ends_when_its_holder_sends_no_request_for_the_priority_timeout()
    {
        await using var server = await JetStreamServer.StartAsync();
        var (connection, js) = await server.ConnectJetStreamAsync();
        await using var _ = connection;
        await js.CreateStreamAsync(new StreamConfig("S", ["s"]) { Storage = StreamConfigStorage.Memory });
        await using var pinned = await connection.SubscribeCoreAsync<string>("$JS.EVENT.ADVISORY.CONSUMER.PINNED.S.T");
        await using var unpinned = await connection.SubscribeCoreAsync<string>("$JS.EVENT.ADVISORY.CONSUMER.UNPINNED.S.T");
        await connection.PingAsync();
        await CreatePinnedAsync(js, "T", TimeSpan.FromSeconds(1));

        using (var stopA = new CancellationTokenSource())
        {
            var a = await ConsumeAsync(js, "T", stopA.Token);
            (await js.PublishAsync("s", "to-a")).EnsureSuccess();
            Assert.Equal("to-a", (await a.Received.Reader.ReadAsync()).Data);
            await stopA.CancelAsync();
        }

        var firstPin = (string?)JsonNode.Parse((await pinned.NextAsync()).Data!)!["pinned_id"];
        var timeout = JsonNode.Parse((await unpinned.NextAsync(TimeSpan.FromSeconds(10))).Data!)!;
        Assert.Equal(("jobs", "timeout"), ((string?)timeout["group"], (string?)timeout["reason"]));
        Assert.Null(Assert.Single((await js.GetConsumerAsync("S", "T")).Info.PriorityGroups!).PinnedClientId);

        // Another client is pinned with the next message.
        using var stopB = new CancellationTokenSource();
        var b = await ConsumeAsync(js, "T", stopB.Token);
        (await js.PublishAsync("s", "to-b")).EnsureSuccess();
        var (data, pin) = await b.Received.Reader.ReadAsync();
        var secondPin = (string?)JsonNode.Parse((await pinned.NextAsync()).Data!)!["pinned_id"];
        Assert.Equal(("to-b", secondPin), (data, pin));
        Assert.NotEqual(firstPin, secondPin);
        await stopB.CancelAsync();
    }

    [Fact(Timeout = 30_000)]
    public async Task The_unpin_api_answers_as_nats_server_2_11()
    {
        await using var server = await JetStreamServer.StartAsync();
        await using var connection = server.Connect();
        await connection.ConnectAsync();
        await CreateConsumersAsync(connection);

        const string Type = "\"type\":\"io.nats.jetstream.api.v1.consumer_unpin_response\"";
        foreach (var (subject, body, error) in new[]
        {
            ("S.P", "", """{"code":400,"err_code":10025,"description":"invalid JSON: unexpected end of JSON input"}"""),
            ("S.P", "{}", """{"code":400,"err_code":10025,"description":"invalid JSON: consumer group not specified"}"""),
            ("S.P", """{"group":"no spaces"}""", """{"code":400,"err_code":10162,"description":"Valid priority group name must match A-Z, a-z, 0-9, -_/=)+ and may not exceed 16 characters"}"""),
            ("X.P", """{"group":"jobs"}""", """{"code":404,"err_code":10059,"description":"stream not found"}"""),
            ("S.X", """{"group":"jobs"}""", """{"code":404,"err_code":10014,"description":"consumer not found"}"""),
            ("S.P", """{"group":"other"}""", """{"code":400,"err_code":10160,"description":"Provided priority group does not exist for this consumer"}"""),
            ("S.N", """{"group":"jobs"}""", """{"code":400,"err_code":10160,"description":"Provided priority group does not exist for this consumer"}"""),
        })
        {
            Assert.Equal($$"""{{{Type}},"error":{{error}}}""", await RequestTextAsync(connection, "$JS.API.CONSUMER.UNPIN." + subject, body));
        }

        // Nobody is pinned: 2.11 still answers success (and advises the unpin).
        Assert.Equal($$"""{{{Type}}}""", await RequestTextAsync(connection, "$JS.API.CONSUMER.UNPIN.S.P", """{"group":"jobs"}"""));
    }

    [Fact(Timeout = 60_000)]
    public async Task A_restart_keeps_the_configuration_not_the_pin()
    {
        using var store = new TempDirectory("js-prio-");
        string? pin = null;
        for (var run = 1; run <= 2; run++)
        {
            await using var server = await JetStreamServer.StartAsync(extraPlugins: [new Broker.Storage.FileStore.FileStorePlugin(new Broker.Storage.FileStore.FileStoreOptions())], storeDirectory: store.Path);
            await using var connection = server.Connect();
            await connection.ConnectAsync();
            if (run == 1)
            {
                Assert.Null((await RequestAsync(connection, "$JS.API.STREAM.CREATE.F", """{"name":"F","subjects":["f"],"storage":"file"}"""))["error"]);
                Assert.Null((await RequestAsync(connection, "$JS.API.CONSUMER.CREATE.F.D", """{"stream_name":"F","config":{"durable_name":"D","ack_policy":"explicit","priority_policy":"pinned_client","priority_groups":["jobs"],"priority_timeout":60000000000}}"""))["error"]);
                await connection.PublishAsync("f", "one");
                await connection.PublishAsync("f", "two");
                var first = await PullAsync(connection, "D", """{"batch":1,"group":"jobs","expires":5000000000}""", "F");
                pin = first.Headers!["Nats-Pin-Id"].ToString();
                Assert.Equal(pin, (string?)(await RequestAsync(connection, "$JS.API.CONSUMER.INFO.F.D", ""))["priority_groups"]![0]!["pinned_client_id"]);
                continue;
            }

            // nats-server keeps the pin in memory only: after a restart nobody is pinned, and the old id is refused.
            var info = await RequestAsync(connection, "$JS.API.CONSUMER.INFO.F.D", "");
            Assert.Equal(("pinned_client", 60_000_000_000L), ((string?)info["config"]!["priority_policy"], (long)info["config"]!["priority_timeout"]!));
            Assert.Equal($$"""[{"group":"jobs","pinned_ts":"{{Zero}}"}]""", info["priority_groups"]!.ToJsonString());
            Assert.Equal((423, "Nats-Wrong-Pin-Id"), Status(await PullAsync(connection, "D", $$"""{"batch":1,"group":"jobs","id":"{{pin}}","expires":5000000000}""", "F")));
            var next = await PullAsync(connection, "D", """{"batch":1,"group":"jobs","expires":5000000000}""", "F");
            Assert.Equal("two", next.Data);
            Assert.NotEqual(pin, next.Headers!["Nats-Pin-Id"].ToString());
        }
    }

    /// <summary>Stream S on subject s with consumers P (pinned_client), O (overflow), both of group "jobs", and N (none).</summary>
    private static async Task CreateConsumersAsync(NatsConnection connection)
    {
        Assert.Null((await RequestAsync(connection, "$JS.API.STREAM.CREATE.S", """{"name":"S","subjects":["s"],"storage":"memory"}"""))["error"]);
        foreach (var (name, policy) in new[] { ("P", "\"priority_policy\":\"pinned_client\",\"priority_groups\":[\"jobs\"],"), ("O", "\"priority_policy\":\"overflow\",\"priority_groups\":[\"jobs\"],"), ("N", "") })
        {
            Assert.Null((await RequestAsync(connection, "$JS.API.CONSUMER.CREATE.S." + name, "{\"stream_name\":\"S\",\"config\":{" + policy + $"\"name\":\"{name}\",\"ack_policy\":\"explicit\"}}}}"))["error"]);
        }
    }

    private static (int Code, string Text) Status(NatsMsg<string> reply) => (reply.Headers?.Code ?? 0, reply.Headers?.MessageText ?? "");

    /// <summary>
    /// Sends a pull request with a reply subject of its own and returns the first reply (a message or a status). Not
    /// under the connection's inbox prefix: NATS.Client routes those by the message's subject, which for a delivered
    /// message is the stored subject, and would drop it.
    /// </summary>
    private static async Task<NatsMsg<string>> PullAsync(NatsConnection connection, string consumer, string body, string stream = "S")
    {
        var inbox = "pull." + Guid.NewGuid().ToString("N");
        await using var replies = await connection.SubscribeCoreAsync<string>(inbox);
        await connection.PingAsync();
        await connection.PublishAsync($"$JS.API.CONSUMER.MSG.NEXT.{stream}.{consumer}", body, replyTo: inbox);
        return await replies.NextAsync(TimeSpan.FromSeconds(10));
    }

    private static async Task<List<string>> FetchAsync(INatsJSConsumer consumer, NatsJSPriorityGroupOpts group, int batch)
    {
        var received = new List<string>();
        await foreach (var message in consumer.FetchAsync<string>(new NatsJSFetchOpts { MaxMsgs = batch, Expires = TimeSpan.FromSeconds(1), PriorityGroup = group }))
        {
            received.Add(message.Data!);
        }

        return received;
    }

    /// <summary>A client consuming the consumer through the group "jobs", acknowledging and recording each message with its pin.</summary>
    private static async Task<PinnedClient> ConsumeAsync(NatsJSContext js, string name, CancellationToken stop)
    {
        var consumer = await js.GetConsumerAsync("S", name, CancellationToken.None);
        var client = new PinnedClient();
        var opts = new NatsJSConsumeOpts { MaxMsgs = 10, Expires = TimeSpan.FromSeconds(5), PriorityGroup = new NatsJSPriorityGroupOpts { Group = "jobs" } };
        _ = Task.Run(async () =>
        {
            try
            {
                await foreach (var message in consumer.ConsumeAsync<string>(opts: opts, cancellationToken: stop))
                {
                    await message.AckAsync(cancellationToken: stop);
                    var pin = message.Headers is { } headers && headers.TryGetValue("Nats-Pin-Id", out var value) ? value.ToString() : "";
                    client.Received.Writer.TryWrite((message.Data!, pin));
                }
            }
            catch (OperationCanceledException)
            {
            }
        }, CancellationToken.None);
        return client;
    }

    private static Task<INatsJSConsumer> CreatePinnedAsync(NatsJSContext js, string name, TimeSpan ttl) =>
        js.CreateOrUpdateConsumerAsync("S", new ConsumerConfig(name)
        {
            AckPolicy = ConsumerConfigAckPolicy.Explicit,
            PriorityPolicy = ConsumerConfigPriorityPolicy.PinnedClient,
            PriorityGroups = ["jobs"],
            PinnedTTL = ttl,
        }).AsTask();

    /// <summary>The next message either client gets.</summary>
    private static async Task<(string Data, string Pin)> ReadEitherAsync(PinnedClient a, PinnedClient b)
    {
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(10));
        while (true)
        {
            if (a.Received.Reader.TryRead(out var fromA))
            {
                return fromA;
            }

            if (b.Received.Reader.TryRead(out var fromB))
            {
                return fromB;
            }

            await Task.Delay(20, timeout.Token);
        }
    }

    private static async Task<string> RequestTextAsync(NatsConnection connection, string subject, string body)
    {
        var reply = await connection.RequestAsync<byte[], byte[]>(subject, Encoding.UTF8.GetBytes(body));
        return Encoding.UTF8.GetString(reply.Data!);
    }

    private static async Task<JsonNode> RequestAsync(NatsConnection connection, string subject, string body) =>
        JsonNode.Parse(await RequestTextAsync(connection, subject, body))!;

    private sealed class PinnedClient
    {
        public System.Threading.Channels.Channel<(string Data, string Pin)> Received { get; } = System.Threading.Channels.Channel.CreateUnbounded<(string Data, string Pin)>();
    }
}
