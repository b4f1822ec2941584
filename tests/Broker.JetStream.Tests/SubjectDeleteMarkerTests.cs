using System.Text;
using Broker.Storage.FileStore;
using NATS.Client.Core;
using NATS.Client.JetStream;
using NATS.Client.JetStream.Models;
using NATS.Client.KeyValueStore;
using static Broker.JetStream.Tests.Sources.SourceTestKit;

namespace Broker.JetStream.Tests;

/// <summary>
/// Subject delete markers (nats-server 2.11, ADR-43: <c>subject_delete_marker_ttl</c>) and the API level that comes with
/// them (<c>$JS.API.INFO</c>'s <c>api.level</c> 1, <c>Nats-Required-Api-Level</c>). nats-server 2.9.10 has neither and no
/// 2.11 binary is at hand, so these run on our broker alone and follow 2.11.17's <c>checkStreamCfg</c>,
/// <c>processJetStreamMsg</c> (a shorter <c>Nats-TTL</c> raised to the marker TTL), the stores' <c>expireMsgs</c> and
/// <c>handleRemovalOrSdm</c> (an empty message with <c>Nats-Marker-Reason: MaxAge</c>, <c>Nats-TTL</c> the marker TTL
/// as a Go duration and <c>Nats-Rollup: sub</c>, on the subject whose last message expired, none for an expired marker)
/// and <c>JSApiLevel</c>. Key-value limit markers through NATS.Client.KeyValueStore 3.3.2 (<c>LimitMarkerTTL</c>,
/// <c>CreateAsync(key, value, ttl)</c>).
/// </summary>
public sealed class SubjectDeleteMarkerTests
{
    [Theory(Timeout = 60_000)]
    [MemberData(nameof(MessageTtlTests.Storages), MemberType = typeof(MessageTtlTests))]
    public async Task Max_age_emptying_a_subject_leaves_a_marker_that_consumers_see_and_that_leaves_none_itself(string storage)
    {
        await using var server = await JetStreamServer.StartAsync(extraPlugins: [new FileStorePlugin()]);
        var (connection, js) = await server.ConnectJetStreamAsync();
        await using var owned = connection;
        var created = await RequestAsync(connection, "$JS.API.STREAM.CREATE.S", $$"""{"name":"S","subjects":["s.>"],"storage":"{{storage}}","max_age":1000000000,"subject_delete_marker_ttl":5000000000}""");
        Assert.Equal(default, Error(created));
        var consumer = await js.CreateOrUpdateConsumerAsync("S", new ConsumerConfig("C") { AckPolicy = ConsumerConfigAckPolicy.None });

        await PublishAsync(js, "s.a", "one");
        await PublishAsync(js, "s.a", "two");
        await PublishAsync(js, "s.b", "three");

        // s.a's last message and s.b's go together: one marker each, after them; then max_age takes the markers and
        // leaves none for them, so the next message is the next one published.
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(40));
        await using var messages = consumer.ConsumeAsync<string>(cancellationToken: timeout.Token).GetAsyncEnumerator(timeout.Token);
        var seen = new List<string>();
        while (seen.Count < 5 && await messages.MoveNextAsync())
        {
            seen.Add(Describe(messages.Current));
        }

        const string Marker = " Nats-Marker-Reason=MaxAge;Nats-TTL=5s;Nats-Rollup=sub";
        Assert.Equal(["1 s.a one", "2 s.a two", "3 s.b three", "4 s.a " + Marker, "5 s.b " + Marker], seen);
        await WaitForMessagesAsync(connection, "S", 0);
        await PublishAsync(js, "s.z", "end");
        Assert.True(await messages.MoveNextAsync());
        Assert.Equal("6 s.z end", Describe(messages.Current));
    }

    private static string Describe(INatsJSMsg<string> message)
    {
        var headers = message.Headers is null ? "" : " " + string.Join(";", message.Headers.Select(h => $"{h.Key}={h.Value}"));
        return $"{message.Metadata!.Value.Sequence.Stream} {message.Subject} {message.Data}{headers}";
    }

    [Theory(Timeout = 60_000)]
    [MemberData(nameof(MessageTtlTests.Storages), MemberType = typeof(MessageTtlTests))]
    public async Task A_shorter_ttl_is_raised_to_the_marker_ttl_and_its_expiry_leaves_a_marker(string storage)
    {
        await using var server = await JetStreamServer.StartAsync(extraPlugins: [new FileStorePlugin()]);
        var (connection, js) = await server.ConnectJetStreamAsync();
        await using var owned = connection;
        Assert.Equal(default, Error(await RequestAsync(connection, "$JS.API.STREAM.CREATE.T", $$"""{"name":"T","subjects":["t.>"],"storage":"{{storage}}","subject_delete_marker_ttl":5000000000}""")));
        Assert.Equal(default, Error(await RequestAsync(connection, "$JS.API.STREAM.CREATE.ONE", $$"""{"name":"ONE","subjects":["one.>"],"storage":"{{storage}}","max_msgs_per_subject":1,"subject_delete_marker_ttl":60000000000}""")));

        // one.a lives a second, its TTL not raised (max_msgs_per_subject 1). A loaded machine can take longer than that
        // to read it back, so its marker may already stand: what proves the TTL kept is the marker within seconds, not
        // the minute the marker TTL would have made it (asserted below).
        await PublishAsync(js, "one.a", "kept short", new NatsHeaders { ["Nats-TTL"] = "1" });
        var one = await MessagesAsync(connection, "ONE");
        Assert.True(
            one is ["1 one.a kept short NATS/1.0|Nats-TTL: 1||"] || (one is [{ } early] && early.StartsWith("2 one.a  NATS/1.0|Nats-Marker-Reason: MaxAge|", StringComparison.Ordinal)),
            "ONE holds one.a as published or, once it expired, its marker: " + string.Join(", ", one));
        // t.a's second is raised to the marker TTL, five seconds: time enough to read it back on a loaded machine.
        await PublishAsync(js, "t.a", "short", new NatsHeaders { ["A"] = "1", ["Nats-TTL"] = "1", ["B"] = "2" });
        await PublishAsync(js, "t.b", "long", new NatsHeaders { ["Nats-TTL"] = "1h" });
        Assert.Equal(["1 t.a short NATS/1.0|A: 1|B: 2|Nats-TTL: 5||", "2 t.b long NATS/1.0|Nats-TTL: 1h||"], await MessagesAsync(connection, "T"));

        await Eventually.AssertAsync(
            async () => (await MessagesAsync(connection, "T")) is [_, { } marker] && marker.StartsWith("3 t.a", StringComparison.Ordinal),
            "t.a's marker",
            TimeSpan.FromSeconds(20));
        Assert.Equal(["2 t.b long NATS/1.0|Nats-TTL: 1h||", "3 t.a  NATS/1.0|Nats-Marker-Reason: MaxAge|Nats-TTL: 5s|Nats-Rollup: sub||"], await MessagesAsync(connection, "T"));
        await Eventually.AssertAsync(async () => (await MessagesAsync(connection, "ONE")) is [{ } only] && only.StartsWith("2 one.a  NATS/1.0|Nats-Marker-Reason: MaxAge|Nats-TTL: 1m0s|", StringComparison.Ordinal), "one.a's marker", TimeSpan.FromSeconds(20));

        // The marker's own time to live ends it without another.
        await WaitForMessagesAsync(connection, "T", 1);
        Assert.Equal(["2 t.b long NATS/1.0|Nats-TTL: 1h||"], await MessagesAsync(connection, "T"));
    }

    [Fact(Timeout = 30_000)]
    public async Task The_configuration_follows_2_11()
    {
        await using var server = await JetStreamServer.StartAsync();
        var (connection, _) = await server.ConnectJetStreamAsync();
        await using var owned = connection;
        Assert.Equal((500, 10052, "subject delete marker TTL must be at least 1 second"), Error(await RequestAsync(connection, "$JS.API.STREAM.CREATE.A", """{"name":"A","storage":"memory","subject_delete_marker_ttl":999999999}""")));
        Assert.Equal((500, 10052, "subject delete marker TTL must not be negative"), Error(await RequestAsync(connection, "$JS.API.STREAM.CREATE.A", """{"name":"A","storage":"memory","subject_delete_marker_ttl":-1}""")));

        // Markers need message TTLs and roll-ups, which a request without them gets (2.11 outside pedantic mode).
        var config = (await RequestAsync(connection, "$JS.API.STREAM.CREATE.A", """{"name":"A","storage":"memory","deny_purge":true,"subject_delete_marker_ttl":1000000000}""")).GetProperty("config");
        Assert.Equal((1_000_000_000L, true, true, false), (config.GetProperty("subject_delete_marker_ttl").GetInt64(), config.GetProperty("allow_msg_ttl").GetBoolean(), config.GetProperty("allow_rollup_hdrs").GetBoolean(), config.GetProperty("deny_purge").GetBoolean()));

        Assert.Equal((500, 10052, "subject delete markers forbidden on mirrors"), Error(await RequestAsync(connection, "$JS.API.STREAM.CREATE.M", """{"name":"M","storage":"memory","mirror":{"name":"A"},"subject_delete_marker_ttl":1000000000}""")));

        // Turned on by an update.
        await RequestAsync(connection, "$JS.API.STREAM.CREATE.U", """{"name":"U","subjects":["u"],"storage":"memory"}""");
        var updated = await RequestAsync(connection, "$JS.API.STREAM.UPDATE.U", """{"name":"U","subjects":["u"],"storage":"memory","subject_delete_marker_ttl":3000000000}""");
        Assert.Equal(3_000_000_000L, updated.GetProperty("config").GetProperty("subject_delete_marker_ttl").GetInt64());
    }

    [Fact(Timeout = 30_000)]
    public async Task Account_info_reports_api_level_1_and_requests_up_to_it_are_served()
    {
        await using var server = await JetStreamServer.StartAsync();
        var (connection, _) = await server.ConnectJetStreamAsync();
        await using var owned = connection;
        var info = await RequestAsync(connection, "$JS.API.INFO", "");
        Assert.Equal(1, info.GetProperty("api").GetProperty("level").GetInt32());
        Assert.StartsWith("""{"level":1,""", info.GetProperty("api").GetRawText(), StringComparison.Ordinal);

        var reply = await connection.RequestAsync<byte[], byte[]>("$JS.API.INFO", [], new NatsHeaders { ["Nats-Required-Api-Level"] = "1" });
        using var served = System.Text.Json.JsonDocument.Parse(reply.Data!);
        Assert.False(served.RootElement.TryGetProperty("error", out _));
        Assert.Equal(1, served.RootElement.GetProperty("api").GetProperty("level").GetInt32());
    }

    [Theory(Timeout = 60_000)]
    [MemberData(nameof(MessageTtlTests.Storages), MemberType = typeof(MessageTtlTests))]
    public async Task A_key_with_a_ttl_reads_as_purged_through_the_kv_client_once_it_expires(string storage)
    {
        await using var server = await JetStreamServer.StartAsync(extraPlugins: [new FileStorePlugin()]);
        var (connection, js) = await server.ConnectJetStreamAsync();
        await using var owned = connection;
        var kv = new NatsKVContext(js);
        var store = await kv.CreateStoreAsync(new NatsKVConfig("B")
        {
            Storage = storage == "file" ? NatsKVStorageType.File : NatsKVStorageType.Memory,
            LimitMarkerTTL = TimeSpan.FromSeconds(30),
        });
        Assert.Equal(TimeSpan.FromSeconds(30), (await store.GetStatusAsync()).LimitMarkerTTL);

        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(40));
        var watched = new List<string>();
        var watching = Task.Run(async () =>
        {
            await foreach (var entry in store.WatchAsync<string>("k", cancellationToken: timeout.Token))
            {
                watched.Add($"{entry.Revision} {entry.Operation} {entry.Value}");
                if (entry.Operation != NatsKVOperation.Put)
                {
                    return;
                }
            }
        });

        await store.CreateAsync("k", "v", TimeSpan.FromSeconds(1));
        await store.PutAsync("kept", "v");
        Assert.Equal("v", (await store.GetEntryAsync<string>("k")).Value);
        await Eventually.AssertAsync(
            async () =>
            {
                try
                {
                    await store.GetEntryAsync<string>("k");
                    return false;
                }
                catch (NatsKVKeyDeletedException)
                {
                    return true;
                }
            },
            "the key to read as deleted",
            TimeSpan.FromSeconds(20));

        await watching.WaitAsync(timeout.Token);
        Assert.Equal(["1 Put v", "3 Purge "], watched);
        Assert.Equal("v", (await store.GetEntryAsync<string>("kept")).Value);

        // Created again after its marker: the marker is its last revision.
        Assert.Equal(4UL, await store.CreateAsync("k", "again"));
    }
}
