using System.Text;
using System.Text.Json.Nodes;
using NATS.Client.Core;
using NATS.Client.JetStream;
using NATS.Client.JetStream.Models;

namespace Broker.JetStream.Tests;

/// <summary>
/// Configuration fields that must not be accepted and ignored: 2.10's stream <c>first_seq</c> (acted on), the fields
/// of later nats-server versions this broker lacks (refused unless at their default), and 2.11's
/// <c>Nats-Required-Api-Level</c> header. nats-server 2.9.10 knows none of these (it ignores them), so these run on our
/// broker only; unknown fields are compared with 2.9.10 in <see cref="RawApiComparisonTests"/>.
/// </summary>
public class ConfigFieldTests
{
    [Fact(Timeout = 30_000)]
    public async Task First_seq_starts_a_new_stream_at_that_sequence()
    {
        await using var server = await JetStreamServer.StartAsync();
        var (connection, js) = await server.ConnectJetStreamAsync();
        await using var _ = connection;

        var created = await RequestAsync(connection, "$JS.API.STREAM.CREATE.F", """{"name":"F","subjects":["f"],"storage":"memory","first_seq":1000}""");
        Assert.Null(created["error"]);
        Assert.Equal(1000UL, (ulong)created["config"]!["first_seq"]!);
        Assert.Equal(1000UL, (ulong)created["state"]!["first_seq"]!);
        Assert.Equal(999UL, (ulong)created["state"]!["last_seq"]!);

        Assert.Equal(1000UL, (await js.PublishAsync("f", "one")).Seq);
        Assert.Equal(1001UL, (await js.PublishAsync("f", "two")).Seq);
        var info = await js.GetStreamAsync("F");
        Assert.Equal(1000UL, info.Info.State.FirstSeq);
        Assert.Equal(2L, info.Info.State.Messages);

        // A consumer from the start sees 1000 first.
        var consumer = await js.CreateOrUpdateConsumerAsync("F", new ConsumerConfig("C") { AckPolicy = ConsumerConfigAckPolicy.Explicit });
        var next = await consumer.NextAsync<string>();
        Assert.Equal(1000UL, next!.Metadata!.Value.Sequence.Stream);

        // Same value, or left out (as a client building the update from scratch does), is fine; another is refused.
        Assert.Null((await RequestAsync(connection, "$JS.API.STREAM.UPDATE.F", """{"name":"F","subjects":["f"],"storage":"memory","first_seq":1000}"""))["error"]);
        var changed = await RequestAsync(connection, "$JS.API.STREAM.UPDATE.F", """{"name":"F","subjects":["f"],"storage":"memory","first_seq":5}""");
        Assert.Equal(10052, (int)changed["error"]!["err_code"]!);
        Assert.Equal("stream configuration update can not change first sequence", (string?)changed["error"]!["description"]);
        Assert.Null((await RequestAsync(connection, "$JS.API.STREAM.UPDATE.F", """{"name":"F","subjects":["f"],"storage":"memory","max_msgs":10}"""))["error"]);
        Assert.Equal(1002UL, (await js.PublishAsync("f", "three")).Seq);
    }

    [Theory(Timeout = 30_000)]
    [InlineData("\"consumer_limits\":{\"max_ack_pending\":5}", "stream consumer limits are not supported by this broker")]
    [InlineData("\"allow_msg_counter\":true", "message counters are not supported by this broker")]
    [InlineData("\"allow_atomic\":true", "batch publishing is not supported by this broker")]
    [InlineData("\"allow_batched\":true", "batch publishing is not supported by this broker")]
    [InlineData("\"allow_msg_schedules\":true", "message schedules are not supported by this broker")]
    [InlineData("\"persist_mode\":\"async\"", "stream persist modes are not supported by this broker")]
    public async Task Stream_fields_of_later_versions_are_refused_not_dropped(string field, string error)
    {
        await using var server = await JetStreamServer.StartAsync();
        await using var connection = server.Connect();
        await connection.ConnectAsync();

        foreach (var subject in new[] { "$JS.API.STREAM.CREATE.N", "$JS.API.STREAM.UPDATE.D" })
        {
            var name = subject[^1..];
            if (name == "D")
            {
                Assert.Null((await RequestAsync(connection, "$JS.API.STREAM.CREATE.D", """{"name":"D","storage":"memory"}"""))["error"]);
            }

            var reply = await RequestAsync(connection, subject, $$"""{"name":"{{name}}","storage":"memory",{{field}}}""");
            Assert.Equal(500, (int)reply["error"]!["code"]!);
            Assert.Equal(10052, (int)reply["error"]!["err_code"]!);
            Assert.Equal(error, (string?)reply["error"]!["description"]);
        }

        var names = await RequestAsync(connection, "$JS.API.STREAM.NAMES", "");
        Assert.Equal(["D"], names["streams"]!.AsArray().Select(n => (string)n!));
    }

    [Fact(Timeout = 30_000)]
    public async Task Defaults_of_later_fields_are_accepted_and_not_echoed()
    {
        await using var server = await JetStreamServer.StartAsync();
        await using var connection = server.Connect();
        await connection.ConnectAsync();

        var stream = await RequestAsync(connection, "$JS.API.STREAM.CREATE.D", """{"name":"D","storage":"memory","compression":"none","consumer_limits":{},"allow_msg_ttl":false,"subject_delete_marker_ttl":0,"persist_mode":"default","allow_msg_counter":false}""");
        Assert.Null(stream["error"]);
        Assert.Null(stream["config"]!["compression"]);
        Assert.Null(stream["config"]!["consumer_limits"]);
        var consumer = await RequestAsync(connection, "$JS.API.CONSUMER.CREATE.D.C", """{"stream_name":"D","config":{"name":"C","ack_policy":"explicit","priority_groups":[],"priority_policy":"none","priority_timeout":0}}""");
        Assert.Null(consumer["error"]);
        Assert.Null(consumer["config"]!["priority_policy"]);
    }

    [Fact(Timeout = 30_000)]
    public async Task A_required_api_level_above_ours_is_refused_with_412()
    {
        await using var server = await JetStreamServer.StartAsync();
        await using var connection = server.Connect();
        await connection.ConnectAsync();

        foreach (var (subject, type) in new[] { ("$JS.API.INFO", "account_info_response"), ("$JS.API.STREAM.CREATE.A", "stream_create_response") })
        {
            var refused = await RequestAsync(connection, subject, """{"name":"A","storage":"memory"}""", new NatsHeaders { ["Nats-Required-Api-Level"] = "2" });
            Assert.Equal("io.nats.jetstream.api.v1." + type, (string?)refused["type"]);
            Assert.Equal(412, (int)refused["error"]!["code"]!);
            Assert.Equal(10185, (int)refused["error"]!["err_code"]!);
            Assert.Equal("JetStream minimum api level required", (string?)refused["error"]!["description"]);
        }

        var garbled = await RequestAsync(connection, "$JS.API.INFO", "", new NatsHeaders { ["Nats-Required-Api-Level"] = "two" });
        Assert.Equal(10185, (int)garbled["error"]!["err_code"]!);
        var fine = await RequestAsync(connection, "$JS.API.STREAM.CREATE.A", """{"name":"A","storage":"memory"}""", new NatsHeaders { ["Nats-Required-Api-Level"] = "1" });
        Assert.Null(fine["error"]);
    }

    private static async Task<JsonNode> RequestAsync(NatsConnection connection, string subject, string body, NatsHeaders? headers = null)
    {
        var reply = await connection.RequestAsync<byte[], byte[]>(subject, Encoding.UTF8.GetBytes(body), headers);
        return JsonNode.Parse(reply.Data!)!;
    }
}
