using System.Text;
using System.Text.Json;
using Broker.Core;
using Broker.Core.Auth;
using Broker.Storage.FileStore;
using Broker.Storage.MemStore;
using NATS.Client.Core;
using NATS.Client.JetStream;
using NATS.Client.JetStream.Models;

namespace Broker.JetStream.Tests;

/// <summary>
/// JetStream per account, against nats-server 2.9.10 with the same configuration: once accounts are configured only
/// those enabling JetStream have it (streams invisible across accounts, the same name in two accounts independent,
/// <c>$JS.API.INFO</c> with each account's limits and usage), the others and <c>$G</c> answer INFO with 10039 and
/// nothing else, the account limits' errors, and restart recovery with the store folder per account.
/// </summary>
public sealed class AccountJetStreamTests
{
    private const string NotEnabled = """{"type":"io.nats.jetstream.api.v1.account_info_response","error":{"code":503,"err_code":10039,"description":"JetStream not enabled for account"}}""";

    private const string Conf = """
        authorization { users: [{user: g, password: g}] }
        accounts {
          A: { jetstream: enabled, users: [{user: a, password: a}] }
          B: { jetstream: { max_streams: 1, max_consumers: 1, max_mem: 1024 }, users: [{user: b, password: b}] }
          C: { users: [{user: c, password: c}] }
          D: { jetstream: { max_mem: 1000, max_file: 2000, max_ack_pending: 5 }, users: [{user: d, password: d}] }
        }
        """;

    public static TheoryData<ServerKind> Servers => new() { ServerKind.Ours, ServerKind.Reference };

    private static void Accounts(BrokerOptions options)
    {
        options.Authorization.Users.Add(User("g"));
        options.Accounts.Add(new AccountOptions { Name = "A", Users = [User("a")], JetStream = new AccountJetStreamOptions() });
        options.Accounts.Add(new AccountOptions
        {
            Name = "B",
            Users = [User("b")],
            JetStream = new AccountJetStreamOptions { MaxStreams = 1, MaxConsumers = 1, MaxMemory = 1024 },
        });
        options.Accounts.Add(new AccountOptions { Name = "C", Users = [User("c")] });
        options.Accounts.Add(new AccountOptions
        {
            Name = "D",
            Users = [User("d")],
            JetStream = new AccountJetStreamOptions { MaxMemory = 1000, MaxStorage = 2000, MaxAckPending = 5 },
        });
    }

    private static UserOptions User(string name) => new() { User = name, Password = name };

    [Theory(Timeout = 60_000)]
    [MemberData(nameof(Servers))]
    public async Task A_stream_is_invisible_from_another_account_and_the_same_name_there_is_independent(ServerKind kind)
    {
        await using var server = await Server.StartAsync(kind);
        await using var a = await server.ConnectAsync("a");
        await using var b = await server.ConnectAsync("b");
        var jsA = new NatsJSContext(a);
        var jsB = new NatsJSContext(b);

        await jsA.CreateStreamAsync(new StreamConfig("S", ["s.>"]) { Storage = StreamConfigStorage.Memory });
        Assert.Empty(await Names(jsB));
        var missing = await Assert.ThrowsAsync<NatsJSApiException>(async () => await jsB.GetStreamAsync("S"));
        Assert.Equal((404, 10059, "stream not found"), (missing.Error.Code, missing.Error.ErrCode, missing.Error.Description));

        await jsB.CreateStreamAsync(new StreamConfig("S", ["s.>"]) { Storage = StreamConfigStorage.Memory });
        (await jsA.PublishAsync("s.1", "in A")).EnsureSuccess();
        (await jsA.PublishAsync("s.2", "in A")).EnsureSuccess();
        (await jsB.PublishAsync("s.1", "in B")).EnsureSuccess();

        Assert.Equal(2, (await jsA.GetStreamAsync("S")).Info.State.Messages);
        Assert.Equal(1, (await jsB.GetStreamAsync("S")).Info.State.Messages);
        Assert.Equal(["S"], await Names(jsA));
        Assert.Equal(["S"], await Names(jsB));

        // A consumer in B reads B's message only.
        var consumer = await jsB.CreateOrUpdateConsumerAsync("S", new ConsumerConfig("C"));
        var next = await consumer.NextAsync<string>(opts: new NatsJSNextOpts { Expires = TimeSpan.FromSeconds(2) });
        Assert.Equal("in B", next?.Data);
    }

    [Theory(Timeout = 60_000)]
    [MemberData(nameof(Servers))]
    public async Task Account_info_reports_each_accounts_limits_and_usage(ServerKind kind)
    {
        await using var server = await Server.StartAsync(kind);
        await using var a = await server.ConnectAsync("a");
        await using var b = await server.ConnectAsync("b");
        await new NatsJSContext(a).CreateStreamAsync(new StreamConfig("S", ["s.>"]) { Storage = StreamConfigStorage.Memory });
        (await new NatsJSContext(a).PublishAsync("s.1", new string('x', 100))).EnsureSuccess();

        var infoA = await Info(a);
        var infoB = await Info(b);
        Assert.Equal(
            """{"max_memory":-1,"max_storage":-1,"max_streams":-1,"max_consumers":-1,"max_ack_pending":-1,"memory_max_stream_bytes":-1,"storage_max_stream_bytes":-1,"max_bytes_required":false}""",
            infoA.GetProperty("limits").GetRawText());
        Assert.Equal(
            """{"max_memory":1024,"max_storage":-1,"max_streams":1,"max_consumers":1,"max_ack_pending":-1,"memory_max_stream_bytes":-1,"storage_max_stream_bytes":-1,"max_bytes_required":false}""",
            infoB.GetProperty("limits").GetRawText());
        Assert.Equal(1, infoA.GetProperty("streams").GetInt32());
        Assert.True(infoA.GetProperty("memory").GetInt64() > 100);
        Assert.Equal(0, infoB.GetProperty("streams").GetInt32());
        Assert.Equal(0, infoB.GetProperty("memory").GetInt64());

        // Each account counts its own API calls, an INFO after its reply: A's stream create; nothing yet in B, then its first INFO.
        Assert.Equal(1, infoA.GetProperty("api").GetProperty("total").GetInt32());
        Assert.Equal(0, infoB.GetProperty("api").GetProperty("total").GetInt32());
        Assert.Equal(1, (await Info(b)).GetProperty("api").GetProperty("total").GetInt32());
    }

    [Theory(Timeout = 60_000)]
    [MemberData(nameof(Servers))]
    public async Task An_account_without_JetStream_and_the_global_account_answer_the_API_with_10039(ServerKind kind)
    {
        await using var server = await Server.StartAsync(kind);
        foreach (var user in new[] { "c", "g" })
        {
            await using var connection = await server.ConnectAsync(user);
            Assert.Equal(NotEnabled, await Request(connection, "$JS.API.INFO", ""));
            Assert.Equal(
                """{"type":"io.nats.jetstream.api.v1.stream_create_response","error":{"code":503,"err_code":10039,"description":"JetStream not enabled for account"}}""",
                await Request(connection, "$JS.API.STREAM.CREATE.X", """{"name":"X","subjects":["x"]}"""));
            Assert.Equal(
                """{"type":"io.nats.jetstream.api.v1.stream_names_response","error":{"code":503,"err_code":10039,"description":"JetStream not enabled for account"},"total":0,"offset":0,"limit":0,"streams":null}""",
                await Request(connection, "$JS.API.STREAM.NAMES", ""));
            Assert.Equal(
                """{"type":"io.nats.jetstream.api.v1.stream_purge_response","error":{"code":503,"err_code":10039,"description":"JetStream not enabled for account"},"purged":0}""",
                await Request(connection, "$JS.API.STREAM.PURGE.X", ""));
            Assert.Equal(
                """{"type":"io.nats.jetstream.api.v1.consumer_create_response","error":{"code":400,"err_code":10025,"description":"invalid JSON"}}""",
                await Request(connection, "$JS.API.CONSUMER.CREATE.X", ""));
            Assert.Equal(
                """{"type":"io.nats.jetstream.api.v1.consumer_names_response","error":{"code":503,"err_code":10039,"description":"JetStream not enabled for account"},"total":0,"offset":0,"limit":0,"consumers":[]}""",
                await Request(connection, "$JS.API.CONSUMER.NAMES.X", ""));

            // A direct get has no handler there: no reply at all (and no no-responders status either).
            await Assert.ThrowsAsync<NatsNoReplyException>(async () =>
                await connection.RequestAsync<byte[], byte[]>("$JS.API.DIRECT.GET.X", """{"seq":1}"""u8.ToArray(), replySerializer: NatsRawSerializer<byte[]>.Default, replyOpts: new NatsSubOpts { Timeout = TimeSpan.FromMilliseconds(500) }));
        }
    }

    [Theory(Timeout = 60_000)]
    [MemberData(nameof(Servers))]
    public async Task Max_streams_and_max_consumers_of_the_account_refuse_the_next_one(ServerKind kind)
    {
        await using var server = await Server.StartAsync(kind);
        await using var b = await server.ConnectAsync("b");
        var js = new NatsJSContext(b);
        await js.CreateStreamAsync(new StreamConfig("S1", ["s1.>"]) { Storage = StreamConfigStorage.Memory });
        var streams = await Assert.ThrowsAsync<NatsJSApiException>(async () =>
            await js.CreateStreamAsync(new StreamConfig("S2", ["s2.>"]) { Storage = StreamConfigStorage.Memory }));
        Assert.Equal((400, 10027, "maximum number of streams reached"), (streams.Error.Code, streams.Error.ErrCode, streams.Error.Description));

        await js.CreateOrUpdateConsumerAsync("S1", new ConsumerConfig("C1"));
        var consumers = await Assert.ThrowsAsync<NatsJSApiException>(async () => await js.CreateOrUpdateConsumerAsync("S1", new ConsumerConfig("C2")));
        Assert.Equal((400, 10026, "maximum consumers limit reached"), (consumers.Error.Code, consumers.Error.ErrCode, consumers.Error.Description));
    }

    [Theory(Timeout = 60_000)]
    [MemberData(nameof(Servers))]
    public async Task Max_memory_of_the_account_refuses_reservations_beyond_it_and_publishes_once_exceeded(ServerKind kind)
    {
        await using var server = await Server.StartAsync(kind);
        await using var d = await server.ConnectAsync("d");
        var js = new NatsJSContext(d);
        var reserved = await Assert.ThrowsAsync<NatsJSApiException>(async () =>
            await js.CreateStreamAsync(new StreamConfig("BIG", ["big.>"]) { Storage = StreamConfigStorage.Memory, MaxBytes = 1001 }));
        Assert.Equal((500, 10028, "insufficient memory resources available"), (reserved.Error.Code, reserved.Error.ErrCode, reserved.Error.Description));
        var stored = await Assert.ThrowsAsync<NatsJSApiException>(async () =>
            await js.CreateStreamAsync(new StreamConfig("BIGF", ["bigf.>"]) { Storage = StreamConfigStorage.File, MaxBytes = 2001 }));
        Assert.Equal((500, 10047, "insufficient storage resources available"), (stored.Error.Code, stored.Error.ErrCode, stored.Error.Description));

        await js.CreateStreamAsync(new StreamConfig("M", ["m.>"]) { Storage = StreamConfigStorage.Memory });
        (await js.PublishAsync("m.1", new string('x', 900))).EnsureSuccess();

        // Stored, then found over the account's limit and taken back out: its sequence stays used.
        var ack = await js.PublishAsync("m.2", new string('y', 200));
        Assert.Equal((400, 10002, "resource limits exceeded for account"), (ack.Error?.Code, ack.Error?.ErrCode, ack.Error?.Description));
        var state = (await js.GetStreamAsync("M")).Info.State;
        Assert.Equal((1L, 2UL), (state.Messages, state.LastSeq));

        // The account's max_ack_pending caps a consumer's.
        var pending = await Assert.ThrowsAsync<NatsJSApiException>(async () =>
            await js.CreateOrUpdateConsumerAsync("M", new ConsumerConfig("C") { MaxAckPending = 6 }));
        Assert.Equal((400, 10121, "consumer max ack pending exceeds system limit of 5"), (pending.Error.Code, pending.Error.ErrCode, pending.Error.Description));
        var consumer = await js.CreateOrUpdateConsumerAsync("M", new ConsumerConfig("D"));
        Assert.Equal(5, consumer.Info.Config.MaxAckPending);
    }

    [Theory(Timeout = 90_000)]
    [MemberData(nameof(Servers))]
    public async Task Streams_of_both_accounts_are_stored_in_their_folders_and_recovered_after_a_restart(ServerKind kind)
    {
        using var store = new TempDirectory("js-acc-");
        await using (var server = await Server.StartAsync(kind, store.Path))
        {
            await using var a = await server.ConnectAsync("a");
            await using var b = await server.ConnectAsync("b");
            var jsA = new NatsJSContext(a);
            var jsB = new NatsJSContext(b);
            await jsA.CreateStreamAsync(new StreamConfig("S", ["s.>"]) { Storage = StreamConfigStorage.File });
            await jsB.CreateStreamAsync(new StreamConfig("S", ["s.>"]) { Storage = StreamConfigStorage.File });
            await jsA.CreateOrUpdateConsumerAsync("S", new ConsumerConfig("CA"));
            (await jsA.PublishAsync("s.1", "a1")).EnsureSuccess();
            (await jsA.PublishAsync("s.2", "a2")).EnsureSuccess();
            (await jsB.PublishAsync("s.1", "b1")).EnsureSuccess();
        }

        Assert.True(Directory.Exists(Path.Combine(store.Path, "jetstream", "A", "streams", "S")));
        Assert.True(Directory.Exists(Path.Combine(store.Path, "jetstream", "B", "streams", "S")));
        Assert.False(Directory.Exists(Path.Combine(store.Path, "jetstream", "$G", "streams", "S")));

        await using (var server = await Server.StartAsync(kind, store.Path))
        {
            await using var a = await server.ConnectAsync("a");
            await using var b = await server.ConnectAsync("b");
            var jsA = new NatsJSContext(a);
            var jsB = new NatsJSContext(b);
            Assert.Equal(2, (await jsA.GetStreamAsync("S")).Info.State.Messages);
            Assert.Equal(1, (await jsB.GetStreamAsync("S")).Info.State.Messages);
            Assert.Equal("CA", (await jsA.GetConsumerAsync("S", "CA")).Info.Name);
            await Assert.ThrowsAsync<NatsJSApiException>(async () => await jsB.GetConsumerAsync("S", "CA"));
        }
    }

    [Theory(Timeout = 60_000)]
    [MemberData(nameof(Servers))]
    public async Task Jsz_details_the_accounts_with_JetStream_and_the_one_acc_names(ServerKind kind)
    {
        await using var server = await Server.StartAsync(kind, monitor: true);
        await using var a = await server.ConnectAsync("a");
        await new NatsJSContext(a).CreateStreamAsync(new StreamConfig("S", ["s.>"]) { Storage = StreamConfigStorage.Memory });

        var plain = await server.JszAsync("");
        Assert.Equal(3, plain.GetProperty("accounts").GetInt32());
        Assert.Equal(1, plain.GetProperty("streams").GetInt32());
        Assert.False(plain.TryGetProperty("account_details", out _));

        var all = await server.JszAsync("?accounts=true");
        Assert.Equal(["A", "B", "D"], all.GetProperty("account_details").EnumerateArray().Select(d => d.GetProperty("name").GetString()).Order(StringComparer.Ordinal));

        var named = await server.JszAsync("?acc=A&streams=true");
        var detail = Assert.Single(named.GetProperty("account_details").EnumerateArray());
        Assert.Equal(("A", "A"), (detail.GetProperty("name").GetString(), detail.GetProperty("id").GetString()));
        Assert.Equal("S", Assert.Single(detail.GetProperty("stream_detail").EnumerateArray()).GetProperty("name").GetString());

        // An unlimited account reports Go's uint64 of -1 as its reservation; B its max_mem.
        Assert.Equal(ulong.MaxValue, detail.GetProperty("reserved_memory").GetUInt64());
        var limited = Assert.Single((await server.JszAsync("?acc=B")).GetProperty("account_details").EnumerateArray());
        Assert.Equal(1024UL, limited.GetProperty("reserved_memory").GetUInt64());

        // The 10039 replies of accounts without JetStream count nowhere (only A's stream create and B's nothing so far).
        await using var c = await server.ConnectAsync("c");
        Assert.Equal(NotEnabled, await Request(c, "$JS.API.INFO", ""));
        Assert.Equal(1, (await server.JszAsync("")).GetProperty("api").GetProperty("total").GetInt32());

        // 2.11's api.level (2.9.10 has no such field; ours as 2.11.9's monitor.go): the server's level in its totals,
        // 0 in an account's detail, where 2.11 leaves it unset.
        var levels = kind == ServerKind.Ours ? new[] { "level", "total", "errors" } : ["total", "errors"];
        Assert.Equal(levels, (await server.JszAsync("")).GetProperty("api").EnumerateObject().Select(p => p.Name));
        Assert.Equal(levels, detail.GetProperty("api").EnumerateObject().Select(p => p.Name));
        if (kind == ServerKind.Ours)
        {
            Assert.Equal(1, (await server.JszAsync("")).GetProperty("api").GetProperty("level").GetInt32());
            Assert.Equal(0, detail.GetProperty("api").GetProperty("level").GetInt32());
        }

        // An account without JetStream is no filter: with accounts=true every account is listed, without it none.
        Assert.False((await server.JszAsync("?acc=C")).TryGetProperty("account_details", out _));
        Assert.Equal(3, (await server.JszAsync("?acc=C&accounts=true")).GetProperty("account_details").GetArrayLength());
    }

    // Ours only (nats-server's reload is a signal to its process): a reload adds, changes and removes JetStream of accounts.
    [Fact(Timeout = 60_000)]
    public async Task A_reload_enables_disables_and_changes_JetStream_of_accounts()
    {
        using var store = new TempDirectory("js-acc-");
        static void Configure(BrokerOptions options, AccountJetStreamOptions? a, AccountJetStreamOptions? b)
        {
            options.Accounts =
            [
                new AccountOptions { Name = "A", Users = [User("a")], JetStream = a },
                new AccountOptions { Name = "B", Users = [User("b")], JetStream = b },
            ];
        }

        await using var broker = await TestBroker.StartAsync(
            o => Configure(o, new AccountJetStreamOptions(), null),
            [new JetStreamPlugin(new JetStreamOptions { StoreDirectory = store.Path }), new FileStorePlugin()]);
        await using var a = await NatsClients.ConnectAsync(broker.Url, "a", o => o.WithUser("a", "a"));
        await using var b = await NatsClients.ConnectAsync(broker.Url, "b", o => o.WithUser("b", "b"));
        await new NatsJSContext(a).CreateStreamAsync(new StreamConfig("S", ["s.>"]) { Storage = StreamConfigStorage.File });
        (await new NatsJSContext(a).PublishAsync("s.1", "kept")).EnsureSuccess();
        Assert.Equal(NotEnabled, await Request(b, "$JS.API.INFO", ""));

        // A loses JetStream (its stream stays on disk), B gets it with a limit.
        var reloaded = new BrokerOptions { Host = "127.0.0.1", Port = broker.Port };
        Configure(reloaded, null, new AccountJetStreamOptions { MaxStreams = 1 });
        Assert.True((await broker.Server.ReloadAsync(reloaded)).Succeeded);
        // The reload returns once JetStream applied it: the next requests find the new responders.
        Assert.Equal(NotEnabled, await Request(a, "$JS.API.INFO", ""));
        Assert.Contains("\"max_streams\":1", await Request(b, "$JS.API.INFO", ""), StringComparison.Ordinal);
        await new NatsJSContext(b).CreateStreamAsync(new StreamConfig("T", ["t.>"]) { Storage = StreamConfigStorage.File });
        Assert.True(Directory.Exists(Path.Combine(store.Path, "jetstream", "A", "streams", "S")));

        // A gets it back: its stream is recovered; B's limit goes.
        reloaded = new BrokerOptions { Host = "127.0.0.1", Port = broker.Port };
        Configure(reloaded, new AccountJetStreamOptions(), new AccountJetStreamOptions());
        Assert.True((await broker.Server.ReloadAsync(reloaded)).Succeeded);
        Assert.Contains("\"streams\":1", await Request(a, "$JS.API.INFO", ""), StringComparison.Ordinal);
        Assert.Equal(1, (await new NatsJSContext(a).GetStreamAsync("S")).Info.State.Messages);
        Assert.Contains("\"max_streams\":-1", await Request(b, "$JS.API.INFO", ""), StringComparison.Ordinal);
    }

    private static async Task<List<string>> Names(NatsJSContext js)
    {
        List<string> names = [];
        await foreach (var name in js.ListStreamNamesAsync())
        {
            names.Add(name);
        }

        return names;
    }

    private static async Task<string> Request(NatsConnection connection, string subject, string body)
    {
        var reply = await connection.RequestAsync<byte[], byte[]>(subject, Encoding.UTF8.GetBytes(body), replySerializer: NatsRawSerializer<byte[]>.Default);
        return Encoding.UTF8.GetString(reply.Data!);
    }

    private static async Task<JsonElement> Info(NatsConnection connection)
    {
        var reply = await connection.RequestAsync<byte[], byte[]>("$JS.API.INFO", [], replySerializer: NatsRawSerializer<byte[]>.Default);
        using var document = JsonDocument.Parse(reply.Data);
        return document.RootElement.Clone();
    }

    /// <summary>Our broker with JetStream on the memory and file stores and <see cref="Accounts"/>, or nats-server with <see cref="Conf"/>.</summary>
    private sealed class Server : IAsyncDisposable
    {
        private readonly TempDirectory? ownStore;
        private TestBroker? ours;
        private ReferenceServer? reference;
        private int monitorPort;

        private Server(TempDirectory? ownStore) => this.ownStore = ownStore;

        private string Url => ours?.Url ?? reference!.Url;

        public static async Task<Server> StartAsync(ServerKind kind, string? storeDirectory = null, bool monitor = false)
        {
            var server = new Server(storeDirectory is null ? new TempDirectory("js-acc-") : null);
            var directory = storeDirectory ?? server.ownStore!.Path;
            if (kind == ServerKind.Ours)
            {
                server.ours = await TestBroker.StartAsync(
                    o =>
                    {
                        Accounts(o);
                        if (monitor)
                        {
                            o.Monitoring.Host = "127.0.0.1";
                            o.Monitoring.Port = 0;
                        }
                    },
                    [new JetStreamPlugin(new JetStreamOptions { StoreDirectory = directory }), new MemoryStorePlugin(), new FileStorePlugin()]);
            }
            else
            {
                server.monitorPort = monitor ? Ports.GetFreePort() : 0;
                var http = monitor ? $"http: \"127.0.0.1:{server.monitorPort}\"\n" : "";
                server.reference = await ReferenceServer.StartAsync(http + Conf + $"\njetstream {{ store_dir: \"{directory}\" }}\n");
            }

            return server;
        }

        public async Task<JsonElement> JszAsync(string query)
        {
            if (ours is not null)
            {
                return await MonitorHttp.GetJsonAsync(ours, "/jsz" + query);
            }

            using var http = new HttpClient { Timeout = TimeSpan.FromSeconds(10) };
            using var document = JsonDocument.Parse(await http.GetStringAsync(new Uri($"http://127.0.0.1:{monitorPort}/jsz{query}")));
            return document.RootElement.Clone();
        }

        public Task<NatsConnection> ConnectAsync(string user) =>
            NatsClients.ConnectAsync(Url, user, o => o.WithUser(user, user));

        public async ValueTask DisposeAsync()
        {
            if (ours is not null)
            {
                await ours.DisposeAsync();
            }

            if (reference is not null)
            {
                await reference.DisposeAsync();
            }

            ownStore?.Dispose();
        }
    }
}
