using System.Text;
using System.Text.Json;
using Broker.Storage.FileStore;
using Broker.TestKit;
using NATS.Client.Core;

namespace Broker.JetStream.Tests;

/// <summary>
/// Creates and deletes of consumers on the file store are answered once their I/O is done, without the API loop
/// waiting for each (issue 25): requests sent together still take effect in the order sent, and every consumer whose
/// create was answered is there after a restart.
/// </summary>
public sealed class ConsumerCreateBatchTests
{
    [Fact(Timeout = 120_000)]
    public async Task Creates_and_deletes_of_one_name_sent_together_take_effect_in_order_and_the_last_survives_a_restart()
    {
        using var store = new TempDirectory("js-batch-");
        await using (var broker = await StartAsync(store.Path))
        await using (var connection = await NatsClients.ConnectAsync(broker.Url))
        {
            await RequestAsync(connection, "$JS.API.STREAM.CREATE.F", """{"name":"F","subjects":["f.>"],"storage":"file"}""");
            string[] subjects = ["CREATE.F.D", "DELETE.F.D", "CREATE.F.D", "DELETE.F.D", "CREATE.F.D"];
            var replies = await SendTogetherAsync(connection, subjects.Select((s, i) => ("$JS.API.CONSUMER." + s, s.StartsWith("CREATE", StringComparison.Ordinal) ? Create("D", i + 1) : "")).ToArray());
            for (var i = 0; i < subjects.Length; i++)
            {
                Assert.False(replies[i].TryGetProperty("error", out var error), $"{subjects[i]} ({i}): {error}");
            }

            Assert.Equal(5, (await RequestAsync(connection, "$JS.API.CONSUMER.INFO.F.D", "")).GetProperty("config").GetProperty("max_deliver").GetInt32());
        }

        await using (var broker = await StartAsync(store.Path))
        await using (var connection = await NatsClients.ConnectAsync(broker.Url))
        {
            var info = await RequestAsync(connection, "$JS.API.CONSUMER.INFO.F.D", "");
            Assert.False(info.TryGetProperty("error", out var error), error.ToString());
            Assert.Equal(5, info.GetProperty("config").GetProperty("max_deliver").GetInt32());
        }
    }

    [Fact(Timeout = 120_000)]
    public async Task Consumers_created_together_are_all_answered_and_all_there_after_a_restart()
    {
        const int Consumers = 200;
        using var store = new TempDirectory("js-batch-");
        await using (var broker = await StartAsync(store.Path))
        await using (var connection = await NatsClients.ConnectAsync(broker.Url))
        {
            await RequestAsync(connection, "$JS.API.STREAM.CREATE.F", """{"name":"F","subjects":["f.>"],"storage":"file"}""");
            var replies = await SendTogetherAsync(connection, Enumerable.Range(0, Consumers).Select(i => ($"$JS.API.CONSUMER.CREATE.F.C{i}", Create("C" + i, i + 1))).ToArray());
            Assert.All(replies, reply => Assert.False(reply.TryGetProperty("error", out var error), error.ToString()));
        }

        await using (var broker = await StartAsync(store.Path))
        await using (var connection = await NatsClients.ConnectAsync(broker.Url))
        {
            var info = await RequestAsync(connection, "$JS.API.STREAM.INFO.F", "");
            Assert.Equal(Consumers, info.GetProperty("state").GetProperty("consumer_count").GetInt32());
            var c7 = await RequestAsync(connection, "$JS.API.CONSUMER.INFO.F.C7", "");
            Assert.Equal(8, c7.GetProperty("config").GetProperty("max_deliver").GetInt32());
        }
    }

    private static Task<TestBroker> StartAsync(string storeDirectory) =>
        TestBroker.StartAsync(plugins: [new JetStreamPlugin(new JetStreamOptions { StoreDirectory = storeDirectory }), new FileStorePlugin(new FileStoreOptions())]);

    private static string Create(string name, int maxDeliver) =>
        $$$"""{"stream_name":"F","config":{"name":"{{{name}}}","durable_name":"{{{name}}}","ack_policy":"explicit","max_deliver":{{{maxDeliver}}}}}""";

    /// <summary>Publishes every request before reading any reply (one connection: they reach the API in this order); the replies by request.</summary>
    private static async Task<JsonElement[]> SendTogetherAsync(NatsConnection connection, (string Subject, string Body)[] requests)
    {
        var inbox = "batch-replies." + Guid.NewGuid().ToString("N");
        await using var replies = await connection.SubscribeCoreAsync<byte[]>(inbox + ".*");
        await connection.PingAsync();
        for (var i = 0; i < requests.Length; i++)
        {
            await connection.PublishAsync(requests[i].Subject, Encoding.UTF8.GetBytes(requests[i].Body), replyTo: $"{inbox}.{i}");
        }

        var answers = new JsonElement[requests.Length];
        for (var received = 0; received < requests.Length; received++)
        {
            var reply = await replies.Msgs.ReadAsync().AsTask().WaitAsync(TimeSpan.FromSeconds(60));
            answers[int.Parse(reply.Subject[(inbox.Length + 1)..], System.Globalization.CultureInfo.InvariantCulture)] = JsonDocument.Parse(reply.Data!).RootElement.Clone();
        }

        return answers;
    }

    private static async Task<JsonElement> RequestAsync(NatsConnection connection, string subject, string body)
    {
        var reply = await connection.RequestAsync<byte[], byte[]>(subject, Encoding.UTF8.GetBytes(body));
        return JsonDocument.Parse(reply.Data!).RootElement.Clone();
    }
}
