using NATS.Client.Core;
using NATS.Client.JetStream;
using NATS.Client.JetStream.Models;
using NATS.Client.KeyValueStore;

namespace Broker.JetStream.Tests;

/// <summary>
/// <c>jetstream { strict: true }</c> (nats-server 2.11's key, 2.12's default): a request field no model knows is
/// refused with nats-server's 400 / 10025 "invalid JSON: json: unknown field", while everything the .NET client sends
/// still works; without it such fields are ignored, as nats-server 2.9 and 2.10 do.
/// </summary>
public class StrictApiTests
{
    [Theory(Timeout = 30_000)]
    [InlineData("$JS.API.STREAM.CREATE.S", """{"name":"S","subjects":["s"],"storage":"memory","bogus":1}""")]
    [InlineData("$JS.API.STREAM.UPDATE.T", """{"name":"T","subjects":["t"],"storage":"memory","max_msgs":5,"bogus":1}""")]
    [InlineData("$JS.API.CONSUMER.CREATE.T", """{"stream_name":"T","config":{"ack_policy":"explicit","bogus":true}}""")]
    public async Task Strict_refuses_an_unknown_field_with_nats_servers_error(string subject, string body)
    {
        await using var server = await JetStreamServer.StartAsync(configure: o => o.Strict = true);
        var (connection, js) = await server.ConnectJetStreamAsync();
        await using var _ = connection;
        await js.CreateStreamAsync(new StreamConfig("T", ["t"]) { Storage = StreamConfigStorage.Memory });

        var reply = await connection.RequestAsync<string, string>(subject, body);

        Assert.Contains("\"code\":400,\"err_code\":10025,\"description\":\"invalid JSON: json: unknown field \\\"bogus\\\"\"", reply.Data, StringComparison.Ordinal);
    }

    [Fact(Timeout = 30_000)]
    public async Task Without_strict_an_unknown_field_is_ignored()
    {
        await using var server = await JetStreamServer.StartAsync();
        await using var connection = server.Connect();

        var reply = await connection.RequestAsync<string, string>("$JS.API.STREAM.CREATE.S", """{"name":"S","subjects":["s"],"storage":"memory","bogus":1}""");

        Assert.DoesNotContain("error", reply.Data, StringComparison.Ordinal);
    }

    [Fact(Timeout = 30_000)]
    public async Task Strict_still_serves_what_the_dotnet_client_sends()
    {
        await using var server = await JetStreamServer.StartAsync(configure: o => o.Strict = true);
        var (connection, js) = await server.ConnectJetStreamAsync();
        await using var _ = connection;

        await js.CreateStreamAsync(new StreamConfig("ORDERS", ["orders.>"]) { Storage = StreamConfigStorage.Memory, Metadata = new Dictionary<string, string> { ["a"] = "b" } });
        await js.UpdateStreamAsync(new StreamConfig("ORDERS", ["orders.>"]) { Storage = StreamConfigStorage.Memory, MaxMsgs = 100 });
        (await js.PublishAsync("orders.1", "one")).EnsureSuccess();
        var consumer = await js.CreateOrUpdateConsumerAsync("ORDERS", new ConsumerConfig("pull") { AckPolicy = ConsumerConfigAckPolicy.Explicit, FilterSubjects = ["orders.>"] });
        await foreach (var message in consumer.FetchAsync<string>(new NatsJSFetchOpts { MaxMsgs = 1, Expires = TimeSpan.FromSeconds(5) }))
        {
            Assert.Equal("one", message.Data);
            await message.AckAsync();
        }

        await js.PurgeStreamAsync("ORDERS", new StreamPurgeRequest { Filter = "orders.1" });
        await foreach (var name in js.ListStreamNamesAsync())
        {
            Assert.Equal("ORDERS", name);
        }

        var kv = new NatsKVContext(js);
        var bucket = await kv.CreateStoreAsync(new NatsKVConfig("config") { History = 3, Storage = NatsKVStorageType.Memory });
        await bucket.PutAsync("k", "v");
        Assert.Equal("v", (await bucket.GetEntryAsync<string>("k")).Value);
        await bucket.DeleteAsync("k");
    }
}
