using System.Text;
using System.Text.Json;
using Broker.Abstractions;
using Broker.Samples.SampleStore;
using Broker.Storage.FileStore;
using Microsoft.Extensions.DependencyInjection;
using NATS.Client.Core;
using NATS.Client.JetStream;
using NATS.Client.JetStream.Models;
using NATS.Client.KeyValueStore;
using static Broker.JetStream.Tests.Sources.SourceTestKit;

namespace Broker.JetStream.Tests;

/// <summary>
/// Per-message TTL (nats-server 2.11, ADR-43): <c>allow_msg_ttl</c> and the <c>Nats-TTL</c> header. nats-server 2.9.10
/// has neither (it drops the field and ignores the header), and no 2.11 binary is at hand, so these run on our broker
/// alone and follow 2.11.9's <c>checkStreamCfg</c>, <c>processJetStreamMsg</c>, <c>parseMessageTTL</c> and
/// <c>expireMsgs</c> and errors.json (10165, 10166): seconds or a Go duration of at least a second, or <c>never</c>
/// (spared by <c>max_age</c>); refused where the stream does not allow it; turned on by an update, not off; refused by
/// name on a storage type that cannot keep it. Through NATS.Client.JetStream and KeyValueStore 3.3.2 (which have
/// <c>AllowMsgTTL</c> and <c>CreateAsync(key, value, ttl)</c>) and raw requests.
/// </summary>
public sealed class MessageTtlTests
{
    public static TheoryData<string> Storages => new() { "memory", "file" };

    [Theory(Timeout = 60_000)]
    [MemberData(nameof(Storages))]
    public async Task A_message_goes_after_its_ttl_and_never_outlives_max_age(string storage)
    {
        await using var server = await JetStreamServer.StartAsync(extraPlugins: [new FileStorePlugin()]);
        var (connection, js) = await server.ConnectJetStreamAsync();
        await using var owned = connection;
        var created = await js.CreateStreamAsync(new StreamConfig("T", ["t.>"])
        {
            Storage = storage == "file" ? StreamConfigStorage.File : StreamConfigStorage.Memory,
            AllowMsgTTL = true,
            MaxAge = TimeSpan.FromSeconds(5),
        });
        Assert.True(created.Info.Config.AllowMsgTTL);

        // Seconds apart, so that a loaded machine still counts all three before the first goes.
        await PublishAsync(js, "t.a", "two seconds", new NatsHeaders { ["Nats-TTL"] = "2s" });
        await PublishAsync(js, "t.b", "forever", new NatsHeaders { ["Nats-TTL"] = "never" });
        await PublishAsync(js, "t.c", "by age");
        Assert.Equal(3L, (await InfoAsync(connection, "T")).GetProperty("state").GetProperty("messages").GetInt64());

        await WaitForMessagesAsync(connection, "T", 2);
        Assert.Equal(["2 t.b forever NATS/1.0|Nats-TTL: never||", "3 t.c by age"], await MessagesAsync(connection, "T"));
        await WaitForMessagesAsync(connection, "T", 1);
        Assert.Equal(["2 t.b forever NATS/1.0|Nats-TTL: never||"], await MessagesAsync(connection, "T"));
        Assert.True((await js.GetStreamAsync("T")).Info.Config.AllowMsgTTL);
    }

    [Fact(Timeout = 30_000)]
    public async Task Nats_TTL_is_refused_where_off_and_when_invalid()
    {
        await using var server = await JetStreamServer.StartAsync();
        var (connection, _) = await server.ConnectJetStreamAsync();
        await using var owned = connection;
        Assert.Equal(default, Error(await RequestAsync(connection, "$JS.API.STREAM.CREATE.OFF", """{"name":"OFF","subjects":["off"],"storage":"memory"}""")));
        Assert.Equal(default, Error(await RequestAsync(connection, "$JS.API.STREAM.CREATE.ON", """{"name":"ON","subjects":["on"],"storage":"memory","allow_msg_ttl":true}""")));

        Assert.Equal((400, 10166, "per-message TTL is disabled"), Error(await PublishRawAsync(connection, "off", "5")));
        Assert.Equal((400, 10166, "per-message TTL is disabled"), Error(await PublishRawAsync(connection, "off", "never")));
        foreach (var invalid in new[] { "abc", "500ms", "0", "-1", "1x", "-5s" })
        {
            Assert.Equal((400, 10165, "invalid per-message TTL"), Error(await PublishRawAsync(connection, "on", invalid)));
        }

        // Without a time to live (an empty value, "00") both take it; seconds, Go durations and never are fine where on.
        Assert.Equal(default, Error(await PublishRawAsync(connection, "off", "")));
        foreach (var valid in new[] { "30", "1h", "1.5s", "NEVER", "00", "2m30s" })
        {
            Assert.Equal(default, Error(await PublishRawAsync(connection, "on", valid)));
        }

        Assert.Equal(1L, (await InfoAsync(connection, "OFF")).GetProperty("state").GetProperty("messages").GetInt64());
        Assert.Equal(6L, (await InfoAsync(connection, "ON")).GetProperty("state").GetProperty("messages").GetInt64());
    }

    [Fact(Timeout = 30_000)]
    public async Task Allow_msg_ttl_can_be_turned_on_by_an_update_not_off()
    {
        await using var server = await JetStreamServer.StartAsync();
        var (connection, js) = await server.ConnectJetStreamAsync();
        await using var owned = connection;
        await RequestAsync(connection, "$JS.API.STREAM.CREATE.U", """{"name":"U","subjects":["u"],"storage":"memory"}""");
        Assert.Equal((400, 10166, "per-message TTL is disabled"), Error(await PublishRawAsync(connection, "u", "1")));

        var on = await RequestAsync(connection, "$JS.API.STREAM.UPDATE.U", """{"name":"U","subjects":["u"],"storage":"memory","allow_msg_ttl":true}""");
        Assert.Equal(default, Error(on));
        Assert.True(on.GetProperty("config").GetProperty("allow_msg_ttl").GetBoolean());
        Assert.Equal(default, Error(await PublishRawAsync(connection, "u", "1")));
        await WaitForMessagesAsync(connection, "U", 0);

        var off = await RequestAsync(connection, "$JS.API.STREAM.UPDATE.U", """{"name":"U","subjects":["u"],"storage":"memory"}""");
        Assert.Equal((500, 10052, "message TTL status can not be disabled"), Error(off));
        Assert.True((await js.GetStreamAsync("U")).Info.Config.AllowMsgTTL);
    }

    [Fact(Timeout = 30_000)]
    public async Task A_storage_type_without_message_ttls_is_named_in_the_refusal_and_keeps_its_own_time()
    {
        await using var server = await JetStreamServer.StartAsync(extraPlugins: [new PlainStorePlugin()]);
        var (connection, js) = await server.ConnectJetStreamAsync();
        await using var owned = connection;
        const string Reason = "storage type \"plain\" does not support per-message TTLs (allow_msg_ttl)";
        var refused = await RequestAsync(connection, "$JS.API.STREAM.CREATE.P", """{"name":"P","subjects":["p"],"storage":"plain","allow_msg_ttl":true}""");
        Assert.Equal((500, 10049, "error creating store for stream: " + Reason), Error(refused));

        Assert.Equal(default, Error(await RequestAsync(connection, "$JS.API.STREAM.CREATE.P", """{"name":"P","subjects":["p"],"storage":"plain"}""")));
        Assert.Equal((500, 10052, Reason), Error(await RequestAsync(connection, "$JS.API.STREAM.UPDATE.P", """{"name":"P","subjects":["p"],"storage":"plain","allow_msg_ttl":true}""")));

        // A mirror on it stores at its own time: the store cannot keep a given one.
        await RequestAsync(connection, "$JS.API.STREAM.CREATE.O", """{"name":"O","subjects":["o"],"storage":"memory"}""");
        await PublishAsync(js, "o", "one");
        var originTime = await TimeAsync(connection, "O");
        while (DateTimeOffset.UtcNow < originTime.AddMilliseconds(300))
        {
            await Task.Delay(20);
        }

        Assert.Equal(default, Error(await RequestAsync(connection, "$JS.API.STREAM.CREATE.M", """{"name":"M","storage":"plain","mirror":{"name":"O"}}""")));
        await WaitForMessagesAsync(connection, "M", 1);
        Assert.True(await TimeAsync(connection, "M") >= originTime.AddMilliseconds(300));
    }

    [Fact(Timeout = 60_000)]
    public async Task A_mirror_honours_a_ttl_only_where_it_allows_them()
    {
        await using var server = await JetStreamServer.StartAsync();
        var (connection, js) = await server.ConnectJetStreamAsync();
        await using var owned = connection;
        await RequestAsync(connection, "$JS.API.STREAM.CREATE.O", """{"name":"O","subjects":["o.>"],"storage":"memory","allow_msg_ttl":true}""");
        await PublishAsync(js, "o.kept", "kept");
        await PublishAsync(js, "o.short", "short", new NatsHeaders { ["Nats-TTL"] = "2" });
        Assert.Equal(default, Error(await RequestAsync(connection, "$JS.API.STREAM.CREATE.ON", """{"name":"ON","storage":"memory","allow_msg_ttl":true,"mirror":{"name":"O"}}""")));
        Assert.Equal(default, Error(await RequestAsync(connection, "$JS.API.STREAM.CREATE.OFF", """{"name":"OFF","storage":"memory","mirror":{"name":"O"}}""")));
        await WaitForMessagesAsync(connection, "OFF", 2);

        // The origin and the mirror that allows TTLs drop it; the other keeps it, header and all.
        await WaitForMessagesAsync(connection, "O", 1);
        await Eventually.AssertAsync(
            async () =>
            {
                var state = (await InfoAsync(connection, "ON")).GetProperty("state");
                return state.GetProperty("last_seq").GetUInt64() == 2 && state.GetProperty("messages").GetInt64() == 1;
            },
            "the mirror that allows TTLs to take in the message and drop it",
            TimeSpan.FromSeconds(20));
        Assert.Equal(["1 o.kept kept"], await MessagesAsync(connection, "ON"));
        Assert.Equal(["1 o.kept kept", "2 o.short short NATS/1.0|Nats-TTL: 2||"], await MessagesAsync(connection, "OFF"));
    }

    [Fact(Timeout = 60_000)]
    public async Task A_file_stream_keeps_its_ttls_across_a_restart()
    {
        using var directory = new TempDirectory("js-ttl-");
        await using (var first = await JetStreamServer.StartAsync(extraPlugins: [new FileStorePlugin()], storeDirectory: directory.Path))
        {
            var (connection, js) = await first.ConnectJetStreamAsync();
            await using var owned = connection;
            await RequestAsync(connection, "$JS.API.STREAM.CREATE.R", """{"name":"R","subjects":["r.>"],"storage":"file","allow_msg_ttl":true}""");
            await PublishAsync(js, "r.a", "short", new NatsHeaders { ["Nats-TTL"] = "2" });
            await PublishAsync(js, "r.b", "kept");
        }

        await using var second = await JetStreamServer.StartAsync(extraPlugins: [new FileStorePlugin()], storeDirectory: directory.Path);
        var (again, _) = await second.ConnectJetStreamAsync();
        await using var ownedAgain = again;
        Assert.True((await InfoAsync(again, "R")).GetProperty("config").GetProperty("allow_msg_ttl").GetBoolean());
        await WaitForMessagesAsync(again, "R", 1);
        Assert.Equal(["2 r.b kept"], await MessagesAsync(again, "R"));
    }

    [Fact(Timeout = 30_000)]
    public async Task A_key_created_with_a_ttl_expires_through_the_kv_client()
    {
        await using var server = await JetStreamServer.StartAsync();
        var (connection, js) = await server.ConnectJetStreamAsync();
        await using var owned = connection;
        var kv = new NatsKVContext(js);
        var store = await kv.CreateStoreAsync(new NatsKVConfig("B") { Storage = NatsKVStorageType.Memory });

        // The client offers a key's ttl only on a bucket with limit markers (LimitMarkerTTL, SubjectDeleteMarkerTests);
        // a bucket whose stream allows TTLs takes a raw put with Nats-TTL, as 2.11 does.
        var refused = await Assert.ThrowsAnyAsync<NatsKVException>(async () => await store.CreateAsync("k", "v", TimeSpan.FromSeconds(1)));
        Assert.Equal("This store does not support TTL", refused.Message);
        var info = await js.GetStreamAsync("KV_B");
        await js.UpdateStreamAsync(info.Info.Config with { AllowMsgTTL = true });

        await PublishAsync(js, "$KV.B.k", "v", new NatsHeaders { ["Nats-TTL"] = "3s" });
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
                catch (NatsKVKeyNotFoundException)
                {
                    return true;
                }
            },
            "the key to expire");
        Assert.Equal("v", (await store.GetEntryAsync<string>("kept")).Value);
    }

    private static async Task<JsonElement> PublishRawAsync(NatsConnection connection, string subject, string ttl)
    {
        var reply = await connection.RequestAsync<byte[], byte[]>(subject, Encoding.UTF8.GetBytes("m"), new NatsHeaders { ["Nats-TTL"] = ttl }, replyOpts: new NatsSubOpts { Timeout = TimeSpan.FromSeconds(10) });
        using var document = JsonDocument.Parse(reply.Data ?? []);
        return document.RootElement.Clone();
    }

    private static async Task<DateTimeOffset> TimeAsync(NatsConnection connection, string stream)
    {
        var reply = await RequestAsync(connection, $"$JS.API.STREAM.MSG.GET.{stream}", """{"seq":1}""");
        return DateTimeOffset.Parse(reply.GetProperty("message").GetProperty("time").GetString()!, System.Globalization.CultureInfo.InvariantCulture);
    }

    /// <summary>A storage type written against contract 1.3: no <see cref="StoreFeatures"/> (the sample store's code underneath).</summary>
    private sealed class PlainStorePlugin : IBrokerPlugin
    {
        public void ConfigureServices(IServiceCollection services, PluginContext context) =>
            services.AddSingleton<IStreamStoreProvider>(new PlainStoreProvider());
    }

    private sealed class PlainStoreProvider : IStreamStoreProvider
    {
        public string StorageType => "plain";

        public StorageMedium Medium => StorageMedium.Memory;

        public ValueTask<IStreamStore> CreateAsync(StreamStoreConfig config, CancellationToken cancellationToken = default) =>
            ValueTask.FromResult<IStreamStore>(new SampleStreamStore(config));

        public ValueTask<IReadOnlyList<IStreamStore>> RecoverAsync(StoreRecoveryContext context, CancellationToken cancellationToken = default) =>
            ValueTask.FromResult<IReadOnlyList<IStreamStore>>([]);
    }
}
