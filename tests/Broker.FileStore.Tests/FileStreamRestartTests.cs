using Broker.JetStream;
using Broker.Storage.FileStore;
using NATS.Client.Core;
using NATS.Client.JetStream;
using NATS.Client.JetStream.Models;
using NATS.Client.KeyValueStore;

namespace Broker.FileStore.Tests;

/// <summary>
/// The engine on the file store through NATS.Client.JetStream 3.3.2: streams, consumers, KV buckets and the dedupe
/// window survive a restart of the broker on the same store directory.
/// </summary>
public sealed class FileStreamRestartTests : IDisposable
{
    private readonly string storeDirectory = Path.Combine(Path.GetTempPath(), "fs-restart-" + Guid.NewGuid().ToString("N"));

    public void Dispose()
    {
        try
        {
            Directory.Delete(storeDirectory, recursive: true);
        }
        catch (DirectoryNotFoundException)
        {
        }
    }

    [Fact(Timeout = 60_000)]
    public async Task Streams_consumers_kv_and_dedupe_survive_restart()
    {
        await using (var broker = await StartAsync())
        {
            await using var connection = new NatsConnection(new NatsOpts { Url = broker.Url, RequestTimeout = TimeSpan.FromSeconds(10) });
            var js = new NatsJSContext(connection);
            await js.CreateStreamAsync(new StreamConfig("ORDERS", ["orders.>"]) { Storage = StreamConfigStorage.File, DuplicateWindow = TimeSpan.FromMinutes(5) });
            for (var i = 1; i <= 300; i++)
            {
                var ack = await js.PublishAsync($"orders.{i % 3}", $"order {i}", opts: new NatsJSPubOpts { MsgId = "id-" + i });
                ack.EnsureSuccess();
                Assert.Equal((ulong)i, ack.Seq);
            }
            await js.CreateOrUpdateConsumerAsync("ORDERS", new ConsumerConfig("C1") { AckPolicy = ConsumerConfigAckPolicy.Explicit, FilterSubject = "orders.1" });
            var kv = new NatsKVContext(js);
            var bucket = await kv.CreateStoreAsync(new NatsKVConfig("config") { History = 3 });
            await bucket.PutAsync("a", "1");
            await bucket.PutAsync("a", "2");
            await bucket.PutAsync("b", "x");
            await bucket.DeleteAsync("b");
        }

        await using (var broker = await StartAsync())
        {
            await using var connection = new NatsConnection(new NatsOpts { Url = broker.Url, RequestTimeout = TimeSpan.FromSeconds(10) });
            var js = new NatsJSContext(connection);
            var stream = await js.GetStreamAsync("ORDERS");
            Assert.Equal(StreamConfigStorage.File, stream.Info.Config.Storage);
            Assert.Equal(300L, stream.Info.State.Messages);
            Assert.Equal(300UL, stream.Info.State.LastSeq);
            var message = await stream.GetAsync(new StreamMsgGetRequest { Seq = 123 });
            Assert.Equal("order 123", System.Text.Encoding.UTF8.GetString(message.Message!.Data.Span));

            // The dedupe window remembers message ids across the restart.
            var again = await js.PublishAsync("orders.1", "again", opts: new NatsJSPubOpts { MsgId = "id-300" });
            Assert.True(again.Duplicate);
            var fresh = await js.PublishAsync("orders.1", "fresh", opts: new NatsJSPubOpts { MsgId = "id-301" });
            Assert.Equal(301UL, fresh.Seq);

            var consumer = await js.GetConsumerAsync("ORDERS", "C1");
            Assert.Equal("orders.1", consumer.Info.Config.FilterSubject);
            Assert.Equal(ConsumerConfigAckPolicy.Explicit, consumer.Info.Config.AckPolicy);

            var kv = new NatsKVContext(js);
            var bucket = await kv.GetStoreAsync("config");
            Assert.Equal("2", (await bucket.GetEntryAsync<string>("a")).Value);
            await Assert.ThrowsAsync<NatsKVKeyDeletedException>(async () => await bucket.GetEntryAsync<string>("b"));
            var entry = await bucket.GetEntryAsync<string>("a", revision: 1);
            Assert.Equal("1", entry.Value);
        }
    }

    // The window is loaded when the first message needs it, not at start (nats-server rebuildDedupe): a duplicate and
    // an expected last id are still judged against what was stored before the restart, as nats-server 2.9.10 does.
    [Fact(Timeout = 60_000)]
    public async Task Expected_last_message_id_and_duplicates_are_judged_after_restart()
    {
        await using (var broker = await StartAsync())
        {
            await using var connection = new NatsConnection(new NatsOpts { Url = broker.Url, RequestTimeout = TimeSpan.FromSeconds(10) });
            var js = new NatsJSContext(connection);
            await js.CreateStreamAsync(new StreamConfig("LAST", ["last.>"]) { Storage = StreamConfigStorage.File, DuplicateWindow = TimeSpan.FromMinutes(2) });
            (await js.PublishAsync("last.a", "1", opts: new NatsJSPubOpts { MsgId = "m1" })).EnsureSuccess();
            (await js.PublishAsync("last.a", "2", opts: new NatsJSPubOpts { MsgId = "m2" })).EnsureSuccess();
        }

        await using (var broker = await StartAsync())
        {
            await using var connection = new NatsConnection(new NatsOpts { Url = broker.Url, RequestTimeout = TimeSpan.FromSeconds(10) });
            var js = new NatsJSContext(connection);
            var wrong = await js.PublishAsync("last.a", "x", opts: new NatsJSPubOpts { ExpectedLastMsgId = "m1" });
            Assert.Equal(10070, wrong.Error?.ErrCode);
            var third = await js.PublishAsync("last.a", "3", opts: new NatsJSPubOpts { ExpectedLastMsgId = "m2" });
            Assert.Equal(3UL, third.Seq);

            // The last message now has no id: nothing matches "m2" any more.
            var stale = await js.PublishAsync("last.a", "x", opts: new NatsJSPubOpts { ExpectedLastMsgId = "m2" });
            Assert.Equal(10070, stale.Error?.ErrCode);
            var duplicate = await js.PublishAsync("last.a", "again", opts: new NatsJSPubOpts { MsgId = "m1" });
            Assert.True(duplicate.Duplicate);
            Assert.Equal(1UL, duplicate.Seq);
        }
    }

    private Task<TestBroker> StartAsync() =>
        TestBroker.StartAsync(plugins: [new JetStreamPlugin(new JetStreamOptions { StoreDirectory = storeDirectory }), new FileStorePlugin(new FileStoreOptions())]);
}
