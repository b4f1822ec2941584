using NATS.Client.Core;
using NATS.Client.JetStream;
using NATS.Client.JetStream.Models;
using NATS.Client.KeyValueStore;

namespace Broker.JetStream.Tests;

/// <summary>
/// Stream <c>republish</c> on our broker and on nats-server 2.9.10: the republished messages as a raw subscriber reads
/// them (subjects, header blocks byte for byte, payloads), what is not republished (other subjects, duplicates,
/// refused messages), the key-value store's republish as nats.c's <c>KeyValueRePublish</c> drives it, and the
/// configuration's errors.
/// </summary>
public sealed class RePublishTests
{
    public static TheoryData<ServerKind> Servers => new() { ServerKind.Ours, ServerKind.Reference };

    [Fact(Timeout = 90_000)]
    public async Task Republished_messages_are_byte_for_byte_nats_servers()
    {
        var reference = await RunAsync(ServerKind.Reference);
        var ours = await RunAsync(ServerKind.Ours);
        Assert.Equal(reference, ours);

        // And what they are, so the comparison cannot pass on two empty or broken transcripts.
        Assert.Contains("HMSG out.rp.a 1 95 98", ours);
        Assert.Contains("Nats-Last-Sequence: 1", ours);
        Assert.Contains("X-Test: t", ours);
        Assert.Contains("Nats-Msg-Size: 10", ours);
        Assert.DoesNotContain(ours, line => line.Contains("out.rp.b", StringComparison.Ordinal));
        Assert.Equal(4, ours.Count(line => line.StartsWith("HMSG out.rp.", StringComparison.Ordinal)));
        Assert.Equal(3, ours.Count(line => line.StartsWith("HMSG out.ho.", StringComparison.Ordinal)));
    }

    // Two streams: RP republishes only rp.*.keep to out.rp.<token>, with payloads; HO republishes everything to
    // out.ho.> without payloads. The transcript ends with the republish of a last message whose payload is "end".
    private static async Task<List<string>> RunAsync(ServerKind kind)
    {
        await using var server = await JetStreamServer.StartAsync(kind);
        var (connection, js) = await server.ConnectJetStreamAsync();
        await using var _ = connection;
        await js.CreateStreamAsync(new StreamConfig("RP", ["rp.>"])
        {
            Storage = StreamConfigStorage.Memory,
            MaxMsgSize = 64,
            Republish = new Republish { Src = "rp.*.keep", Dest = "out.rp.$1" },
        });
        await js.CreateStreamAsync(new StreamConfig("HO", ["ho.>"])
        {
            Storage = StreamConfigStorage.Memory,
            Republish = new Republish { Src = "", Dest = "out.ho.>", HeadersOnly = true },
        });

        await using var raw = await RawClient.ConnectAsync(server.EndPoint);
        await raw.SendAsync("CONNECT {\"verbose\":false,\"headers\":true}\r\nSUB out.> 1\r\n");
        await raw.PingAndCollectAsync();

        (await js.PublishAsync("rp.a.keep", "one")).EnsureSuccess();
        (await js.PublishAsync("rp.a.keep", "two", headers: new NatsHeaders { ["X-Test"] = "t" })).EnsureSuccess();
        (await js.PublishAsync("rp.b.drop", "not republished")).EnsureSuccess();
        (await js.PublishAsync("rp.c.keep", "first", opts: new NatsJSPubOpts { MsgId = "m1" })).EnsureSuccess();
        var duplicate = await js.PublishAsync("rp.c.keep", "first", opts: new NatsJSPubOpts { MsgId = "m1" });
        Assert.True(duplicate.Duplicate);
        var tooLarge = await js.PublishAsync("rp.a.keep", new string('x', 100));
        Assert.NotNull(tooLarge.Error);
        (await js.PublishAsync("ho.x", "ten bytes!")).EnsureSuccess();
        (await js.PublishAsync("ho.y.z", "more", headers: new NatsHeaders { ["A"] = "1", ["B"] = "2" })).EnsureSuccess();
        (await js.PublishAsync("ho.x", "")).EnsureSuccess();
        (await js.PublishAsync("rp.a.keep", "end")).EnsureSuccess();
        var transcript = await raw.CollectUntilAsync("end", TimeSpan.FromSeconds(10));

        // nats-server writes an internal message without a reply subject with the reply's separating space all the same
        // ("HMSG out.rp.a 1  95 98"): left out, as our broker writes every message without one (clients read both).
        return [.. transcript.Lines.Select(line => line.StartsWith("HMSG ", StringComparison.Ordinal) ? string.Join(' ', line.Split(' ', StringSplitOptions.RemoveEmptyEntries)) : line)];
    }

    [Theory(Timeout = 60_000)]
    [MemberData(nameof(Servers))]
    public async Task Key_value_republish_as_nats_c_KeyValueRePublish(ServerKind kind)
    {
        await using var server = await JetStreamServer.StartAsync(kind);
        var (connection, js) = await server.ConnectJetStreamAsync();
        await using var _ = connection;
        var kv = new NatsKVContext(js);
        await kv.CreateStoreAsync(new NatsKVConfig("TEST_UPDATE") { Storage = NatsKVStorageType.Memory });

        // A bucket's republish cannot be added afterwards.
        var refused = await Assert.ThrowsAsync<NatsJSApiException>(async () => await kv.UpdateStoreAsync(
            new NatsKVConfig("TEST_UPDATE") { Storage = NatsKVStorageType.Memory, Republish = new NatsKVRepublish { Src = ">", Dest = "bar.>" } }));
        Assert.Equal((500, 10052, "stream configuration update can not change RePublish"), (refused.Error.Code, refused.Error.ErrCode, refused.Error.Description));

        var store = await kv.CreateStoreAsync(new NatsKVConfig("TEST") { Storage = NatsKVStorageType.Memory, Republish = new NatsKVRepublish { Src = ">", Dest = "bar.>" } });
        var info = await js.GetStreamAsync("KV_TEST");
        Assert.Equal((">", "bar.>", false), (info.Info.Config.Republish?.Src, info.Info.Config.Republish?.Dest, info.Info.Config.Republish?.HeadersOnly ?? false));

        await using var subscription = await connection.SubscribeCoreAsync<string>("bar.>");
        await connection.PingAsync();
        await store.PutAsync("foo", "value");
        await store.PutAsync("foo", "again");
        var first = await subscription.NextAsync();
        var second = await subscription.NextAsync();
        Assert.Equal(("bar.$KV.TEST.foo", "value"), (first.Subject, first.Data));
        Assert.Equal("$KV.TEST.foo", first.Headers?["Nats-Subject"].ToString());
        Assert.Equal(("KV_TEST", "1", "0"), (first.Headers?["Nats-Stream"].ToString(), first.Headers?["Nats-Sequence"].ToString(), first.Headers?["Nats-Last-Sequence"].ToString()));
        Assert.Equal(("again", "2", "1"), (second.Data, second.Headers?["Nats-Sequence"].ToString(), second.Headers?["Nats-Last-Sequence"].ToString()));
    }
}
