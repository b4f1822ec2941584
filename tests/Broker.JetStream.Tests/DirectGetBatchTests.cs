using System.Text;
using System.Text.Json.Nodes;
using NATS.Client.Core;
using NATS.Client.JetStream;
using NATS.Client.JetStream.Models;

namespace Broker.JetStream.Tests;

/// <summary>
/// nats-server 2.11's direct get of many messages: <c>batch</c> from <c>seq</c> or of <c>next_by_subj</c> with
/// <c>max_bytes</c>, and <c>multi_last</c> with <c>up_to_seq</c> / <c>up_to_time</c>, answered as a stream of
/// messages carrying <c>Nats-Num-Pending</c> and <c>Nats-Last-Sequence</c> and ended by a <c>204 EOB</c> status.
/// nats-server 2.9.10 has neither (it ignores the fields and answers one message) and NATS.Client.JetStream 3.3.2 does
/// not expose them, so these send raw requests through NATS.Client.Core and follow 2.11.17's <c>getDirectRequest</c>
/// and <c>getDirectMulti</c>, counters included (a multi_last batch cut short reports what it counted down to).
/// </summary>
public sealed class DirectGetBatchTests
{
    // Stream S: 1 s.a "1", 2 s.b "2" (with a header), 3 s.a "3", 4 s.c "4", 5 s.b "5".
    private static async Task<(JetStreamServer Server, NatsConnection Connection)> StartAsync(ServerKind kind = ServerKind.Ours)
    {
        var server = await JetStreamServer.StartAsync(kind);
        var (connection, js) = await server.ConnectJetStreamAsync();
        await js.CreateStreamAsync(new StreamConfig("S", ["s.>"]) { Storage = StreamConfigStorage.Memory, AllowDirect = true });
        foreach (var (subject, data) in new[] { ("s.a", "1"), ("s.b", "2"), ("s.a", "3"), ("s.c", "4"), ("s.b", "5") })
        {
            var headers = data == "2" ? new NatsHeaders { ["X"] = "y" } : null;
            (await js.PublishAsync(subject, data, headers: headers)).EnsureSuccess();
        }

        return (server, connection);
    }

    [Fact(Timeout = 30_000)]
    public async Task A_batch_streams_messages_with_counters_and_ends_with_eob()
    {
        var (server, connection) = await StartAsync();
        await using var _ = server;
        await using var __ = connection;

        var replies = await DirectAsync(connection, """{"seq":2,"batch":3}""");
        Assert.Equal(["2 s.b 4 0", "3 s.a 3 2", "4 s.c 2 3", "EOB 1 4"], replies.Select(Describe));
        Assert.Equal("y", replies[0].Headers!["X"].ToString());
        Assert.Equal(("S", "2"), (replies[0].Headers!["Nats-Stream"].ToString(), replies[0].Headers!["Nats-Sequence"].ToString()));
        Assert.False(string.IsNullOrEmpty(replies[0].Headers!["Nats-Time-Stamp"].ToString()));

        Assert.Equal(["2 s.b 2 0", "5 s.b 1 2", "EOB 0 5"], (await DirectAsync(connection, """{"next_by_subj":"s.b","batch":10}""")).Select(Describe));
        Assert.Equal(["1 s.a 5 0", "EOB 4 1"], (await DirectAsync(connection, """{"seq":1,"batch":10,"max_bytes":1}""")).Select(Describe));
        Assert.Equal(["404 Message Not Found"], (await DirectAsync(connection, """{"seq":99,"batch":2}""")).Select(Describe));

        // Without a batch, a request is answered with one message and no counters, as before.
        var single = Assert.Single(await DirectAsync(connection, """{"seq":3}""", untilStatus: false));
        Assert.Equal("3", single.Data);
        Assert.False(single.Headers!.ContainsKey("Nats-Num-Pending"));
    }

    [Fact(Timeout = 30_000)]
    public async Task Multi_last_sends_each_subjects_last_as_of_a_sequence_or_time()
    {
        var (server, connection) = await StartAsync();
        await using var _ = server;
        await using var __ = connection;

        Assert.Equal(["3 s.a 1 0", "5 s.b 0 3", "EOB 0 5 5"], (await DirectAsync(connection, """{"multi_last":["s.a","s.b"]}""")).Select(Describe));
        Assert.Equal(["2 s.b 1 0", "3 s.a 0 2", "EOB 0 3 3"], (await DirectAsync(connection, """{"multi_last":["s.a","s.b"],"up_to_seq":3}""")).Select(Describe));
        Assert.Equal(["3 s.a 2 0", "4 s.c 1 3", "EOB 0 4 5"], (await DirectAsync(connection, """{"multi_last":[">"],"batch":2}""")).Select(Describe));
        Assert.Equal(["4 s.c 1 0", "5 s.b 0 4", "EOB 0 5 5"], (await DirectAsync(connection, """{"multi_last":["s.*"],"seq":4}""")).Select(Describe));
        Assert.Equal(["404 No Results"], (await DirectAsync(connection, """{"multi_last":["x.>"]}""")).Select(Describe));
        Assert.Equal(["404 No Results"], (await DirectAsync(connection, """{"multi_last":["s.a"],"up_to_time":"2001-01-01T00:00:00Z"}""")).Select(Describe));
        var future = DateTimeOffset.UtcNow.AddHours(1).ToString("O", System.Globalization.CultureInfo.InvariantCulture);
        Assert.Equal(["3 s.a 0 0", "EOB 0 3 5"], (await DirectAsync(connection, $$"""{"multi_last":["s.a"],"up_to_time":"{{future}}"}""")).Select(Describe));
    }

    [Theory(Timeout = 30_000)]
    [InlineData("""{"last_by_subj":"s.a","batch":2}""")]
    [InlineData("""{"last_by_subj":"s.a","multi_last":["s.a"]}""")]
    [InlineData("""{"next_by_subj":"s.a","multi_last":["s.a"]}""")]
    [InlineData("""{"multi_last":["s.a"],"up_to_seq":2,"up_to_time":"2001-01-01T00:00:00Z"}""")]
    public async Task Conflicting_options_are_a_bad_request(string body)
    {
        var (server, connection) = await StartAsync();
        await using var _ = server;
        await using var __ = connection;
        Assert.Equal(["408 Bad Request"], (await DirectAsync(connection, body)).Select(Describe));
    }

    [Fact(Timeout = 30_000)]
    public async Task The_api_message_get_refuses_a_batch()
    {
        var (server, connection) = await StartAsync();
        await using var _ = server;
        await using var __ = connection;
        foreach (var body in new[] { """{"seq":1,"batch":2}""", """{"seq":1,"max_bytes":10}""" })
        {
            var reply = await connection.RequestAsync<byte[], byte[]>("$JS.API.STREAM.MSG.GET.S", Encoding.UTF8.GetBytes(body));
            var error = JsonNode.Parse(reply.Data!)!["error"]!;
            Assert.Equal((400, 10003, "bad request"), ((int)error["code"]!, (int)error["err_code"]!, (string?)error["description"]));
        }
    }

    [Fact(Timeout = 30_000)]
    public async Task Nats_server_2_9_10_ignores_the_batch_and_answers_one_message()
    {
        var (server, connection) = await StartAsync(ServerKind.Reference);
        await using var _ = server;
        await using var __ = connection;
        var single = Assert.Single(await DirectAsync(connection, """{"seq":2,"batch":3}""", untilStatus: false));
        Assert.Equal(("2", false), (single.Data, single.Headers!.ContainsKey("Nats-Num-Pending")));
    }

    /// <summary>"seq subject pending last" for a message, "EOB pending last [upto]" for the end, "code text" for another status.</summary>
    private static string Describe(NatsMsg<string> msg)
    {
        var headers = msg.Headers!;
        string Value(string key) => headers.TryGetValue(key, out var value) ? value.ToString() : "";
        if (headers.Code == 204)
        {
            return $"EOB {Value("Nats-Num-Pending")} {Value("Nats-Last-Sequence")} {Value("Nats-UpTo-Sequence")}".TrimEnd();
        }

        return headers.Code != 0
            ? $"{headers.Code} {headers.MessageText}"
            : $"{Value("Nats-Sequence")} {Value("Nats-Subject")} {Value("Nats-Num-Pending")} {Value("Nats-Last-Sequence")}";
    }

    /// <summary>Sends a direct get and collects the replies up to the first status (or the first reply).</summary>
    private static async Task<List<NatsMsg<string>>> DirectAsync(NatsConnection connection, string body, bool untilStatus = true)
    {
        var inbox = connection.NewInbox();
        await using var replies = await connection.SubscribeCoreAsync<string>(inbox);
        await connection.PingAsync();
        await connection.PublishAsync("$JS.API.DIRECT.GET.S", body, replyTo: inbox);
        var list = new List<NatsMsg<string>>();
        while (true)
        {
            var reply = await replies.NextAsync(TimeSpan.FromSeconds(10));
            list.Add(reply);
            if (!untilStatus || reply.Headers?.Code is > 0)
            {
                return list;
            }
        }
    }
}
