using System.Text;
using Broker.Core;
using Broker.Core.Auth;
using Broker.Storage.FileStore;
using Broker.Storage.MemStore;
using NATS.Client.Core;
using NATS.Client.JetStream;
using NATS.Client.JetStream.Models;

namespace Broker.JetStream.Tests;

/// <summary>
/// <c>$JS.API.ACCOUNT.PURGE.&lt;account&gt;</c> from a user of the system account, against nats-server 2.9.10 with the
/// same configuration: the named account's streams (file and memory, with their consumers) and its store folder are
/// gone, other accounts keep theirs, the account keeps JetStream; unknown accounts and accounts without JetStream are
/// answered the same; the system account answers <c>$JS.API.INFO</c> with 10039 and other API subjects with silence.
/// Where 2.9.10 has since been fixed (any account's user could purge any account; a name with a path separator
/// reached outside the store folder), ours does what later nats-server versions do, tested on ours alone.
/// </summary>
public sealed class AccountPurgeTests
{
    private const string Initiated = """{"type":"io.nats.jetstream.api.v1.account_purge_response","initiated":true}""";
    private const string NoReply = "no reply";
    private const string NoResponders = "no responders";

    private const string Conf = """
        accounts {
          SYS: { users: [{user: sys, password: sys}] }
          A: { jetstream: enabled, users: [{user: a, password: a}] }
          B: { jetstream: enabled, users: [{user: b, password: b}] }
          C: { users: [{user: c, password: c}] }
        }
        system_account: SYS
        """;

    public static TheoryData<ServerKind> Servers => new() { ServerKind.Ours, ServerKind.Reference };

    [Theory(Timeout = 90_000)]
    [MemberData(nameof(Servers))]
    public async Task A_system_user_purges_every_stream_of_the_named_account_and_its_folder(ServerKind kind)
    {
        using var store = new TempDirectory("js-purge-");
        await using var server = await Server.StartAsync(kind, store.Path);
        await using var a = await server.ConnectAsync("a");
        await using var b = await server.ConnectAsync("b");
        await using var sys = await server.ConnectAsync("sys");
        var jsA = new NatsJSContext(a);
        var jsB = new NatsJSContext(b);
        await jsA.CreateStreamAsync(new StreamConfig("F", ["f.>"]) { Storage = StreamConfigStorage.File });
        await jsA.CreateStreamAsync(new StreamConfig("M", ["m.>"]) { Storage = StreamConfigStorage.Memory });
        await jsA.CreateOrUpdateConsumerAsync("F", new ConsumerConfig("D"));
        await jsB.CreateStreamAsync(new StreamConfig("F", ["f.>"]) { Storage = StreamConfigStorage.File });
        (await jsA.PublishAsync("f.1", "a")).EnsureSuccess();
        (await jsA.PublishAsync("m.1", "a")).EnsureSuccess();
        (await jsB.PublishAsync("f.1", "b")).EnsureSuccess();
        Assert.True(Directory.Exists(Path.Combine(store.Path, "jetstream", "A", "streams", "F")));

        Assert.Equal(Initiated, await Request(sys, "$JS.API.ACCOUNT.PURGE.A", ""));

        Assert.Empty(await Names(jsA));
        Assert.False(Directory.Exists(Path.Combine(store.Path, "jetstream", "A")));
        Assert.Equal(["F"], await Names(jsB));
        Assert.Equal(1, (await jsB.GetStreamAsync("F")).Info.State.Messages);
        Assert.True(Directory.Exists(Path.Combine(store.Path, "jetstream", "B", "streams", "F")));
        var info = await Request(a, "$JS.API.INFO", "");
        Assert.Contains("\"memory\":0,\"storage\":0,\"streams\":0,\"consumers\":0,", info, StringComparison.Ordinal);

        // Nothing stores A's publishes any more; the account keeps JetStream and starts again from nothing.
        Assert.Equal(NoResponders, await Request(a, "f.2", "gone"));
        await jsA.CreateStreamAsync(new StreamConfig("F", ["f.>"]) { Storage = StreamConfigStorage.File });
        var ack = await jsA.PublishAsync("f.3", "again");
        ack.EnsureSuccess();
        Assert.Equal(1ul, ack.Seq);
        Assert.True(Directory.Exists(Path.Combine(store.Path, "jetstream", "A", "streams", "F")));
    }

    [Theory(Timeout = 60_000)]
    [MemberData(nameof(Servers))]
    public async Task Unknown_accounts_and_accounts_without_JetStream_are_answered_alike_and_other_system_subjects_get_no_reply(ServerKind kind)
    {
        using var store = new TempDirectory("js-purge-");
        await using var server = await Server.StartAsync(kind, store.Path);
        await using var sys = await server.ConnectAsync("sys");

        Assert.Equal(Initiated, await Request(sys, "$JS.API.ACCOUNT.PURGE.NOPE", ""));
        Assert.Equal(Initiated, await Request(sys, "$JS.API.ACCOUNT.PURGE.C", ""));
        Assert.Equal(Initiated, await Request(sys, "$JS.API.ACCOUNT.PURGE.B", "the body is ignored"));

        // The system account has no JetStream: INFO says so, and other API subjects are taken without a reply.
        Assert.Equal(
            """{"type":"io.nats.jetstream.api.v1.account_info_response","error":{"code":503,"err_code":10039,"description":"JetStream not enabled for account"}}""",
            await Request(sys, "$JS.API.INFO", ""));
        Assert.Equal(NoReply, await Request(sys, "$JS.API.ACCOUNT.PURGE", "", Silence));
        Assert.Equal(NoReply, await Request(sys, "$JS.API.ACCOUNT.PURGE.A.x", "", Silence));
        Assert.Equal(NoReply, await Request(sys, "$JS.API.STREAM.NAMES", "", Silence));
    }

    [Fact(Timeout = 60_000)]
    public async Task Only_the_system_account_may_purge_and_a_name_with_a_path_separator_is_refused()
    {
        // nats-server 2.9.10 purges for a user of any account and removes <store_dir>/jetstream/<name> whatever the name
        // holds; 2.11.2 and later answer other accounts with silence, 2.12.6 and later refuse path separators: ours does the latter.
        using var store = new TempDirectory("js-purge-");
        await using var server = await Server.StartAsync(ServerKind.Ours, store.Path);
        await using var a = await server.ConnectAsync("a");
        await using var b = await server.ConnectAsync("b");
        await using var c = await server.ConnectAsync("c");
        await using var sys = await server.ConnectAsync("sys");
        await new NatsJSContext(b).CreateStreamAsync(new StreamConfig("F", ["f.>"]) { Storage = StreamConfigStorage.File });
        using var outside = new TempDirectory("js-outside-");
        outside.Write("keep", "kept");
        Assert.DoesNotContain('.', outside.Path);

        Assert.Equal(NoReply, await Request(a, "$JS.API.ACCOUNT.PURGE.B", "", Silence));
        Assert.Equal(NoReply, await Request(c, "$JS.API.ACCOUNT.PURGE.B", "", Silence));
        Assert.Equal(["F"], await Names(new NatsJSContext(b)));

        Assert.Equal(
            """{"type":"io.nats.jetstream.api.v1.account_purge_response","error":{"code":500,"err_code":10051,"description":"account name can not contain path separators"}}""",
            await Request(sys, "$JS.API.ACCOUNT.PURGE." + outside.Path, ""));
        Assert.Equal(
            """{"type":"io.nats.jetstream.api.v1.account_purge_response","error":{"code":500,"err_code":10051,"description":"account name can not contain path separators"}}""",
            await Request(sys, @"$JS.API.ACCOUNT.PURGE.B\x", ""));
        Assert.True(File.Exists(Path.Combine(outside.Path, "keep")));
        Assert.Equal(["F"], await Names(new NatsJSContext(b)));
    }

    // How long a request that should get no reply is given; one that should be answered waits up to 10 s (a loaded machine).
    private static readonly TimeSpan Silence = TimeSpan.FromMilliseconds(700);

    /// <summary>The reply's text, <see cref="NoReply"/> after <paramref name="wait"/> (10 s by default) of silence, or <see cref="NoResponders"/>.</summary>
    private static async Task<string> Request(NatsConnection connection, string subject, string body, TimeSpan? wait = null)
    {
        try
        {
            var reply = await connection.RequestAsync<byte[], byte[]>(
                subject,
                Encoding.UTF8.GetBytes(body),
                replySerializer: NatsRawSerializer<byte[]>.Default,
                replyOpts: new NatsSubOpts { Timeout = wait ?? TimeSpan.FromSeconds(10) });
            return Encoding.UTF8.GetString(reply.Data!);
        }
        catch (NatsNoReplyException)
        {
            return NoReply;
        }
        catch (NatsNoRespondersException)
        {
            return NoResponders;
        }
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

    /// <summary>Our broker with JetStream on the memory and file stores and the accounts of <see cref="Conf"/>, or nats-server with it.</summary>
    private sealed class Server : IAsyncDisposable
    {
        private TestBroker? ours;
        private ReferenceServer? reference;

        private string Url => ours?.Url ?? reference!.Url;

        public static async Task<Server> StartAsync(ServerKind kind, string storeDirectory)
        {
            var server = new Server();
            if (kind == ServerKind.Ours)
            {
                server.ours = await TestBroker.StartAsync(
                    o =>
                    {
                        o.Accounts.Add(new AccountOptions { Name = "SYS", Users = [User("sys")] });
                        o.Accounts.Add(new AccountOptions { Name = "A", Users = [User("a")], JetStream = new AccountJetStreamOptions() });
                        o.Accounts.Add(new AccountOptions { Name = "B", Users = [User("b")], JetStream = new AccountJetStreamOptions() });
                        o.Accounts.Add(new AccountOptions { Name = "C", Users = [User("c")] });
                        o.SystemAccount = "SYS";
                    },
                    [new JetStreamPlugin(new JetStreamOptions { StoreDirectory = storeDirectory }), new MemoryStorePlugin(), new FileStorePlugin()]);
            }
            else
            {
                server.reference = await ReferenceServer.StartAsync(Conf + $"\njetstream {{ store_dir: \"{storeDirectory}\" }}\n");
            }

            return server;
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
        }

        private static UserOptions User(string name) => new() { User = name, Password = name };
    }
}
