using System.Globalization;
using System.Net;
using System.Text.Json;
using Broker.Core;
using Broker.Core.Auth;
using NATS.Client.Core;

namespace Broker.Monitoring.Tests;

/// <summary>
/// Monitoring with accounts, the same scenario on our broker and on nats-server 2.9.10: accounts A and B with a user
/// each, a user of the global account, and C without users. Both run with <c>no_system_account</c>: nats-server's
/// system account adds three service imports to every account, which are not built yet (SystemAccountTests covers the
/// system account); everything else is compared as is.
/// </summary>
public sealed class AccountMonitoringTests
{
    private const string ReferenceConfig = """
        no_system_account: true
        accounts {
          A: { users: [{user: a, password: a}] }
          B: { users: [{user: b, password: b}] }
          C: {}
        }
        authorization { users: [{user: g, password: g}], timeout: 30 }
        """;

    [Theory(Timeout = 60_000)]
    [InlineData(ServerKind.Ours)]
    [InlineData(ServerKind.Reference)]
    public async Task Connz_shows_the_account_with_auth_and_filters_open_and_closed_connections_by_it(ServerKind kind)
    {
        await using var server = await Monitored.StartAsync(kind);
        await using var tenants = await Tenants.ConnectAsync(server);

        var all = await server.GetJsonAsync("/connz?auth=true");
        Assert.Equal(
            ["a1:a:A", "a2:a:A", "b1:b:B", "g1:g:-"],
            Named(all).Select(c => $"{Name(c)}:{c.GetProperty("authorized_user").GetString()}:{(c.TryGetProperty("account", out var acc) ? acc.GetString() : "-")}").Order());

        // Without auth the filter still works (nats-server 2.9.10 checks for auth before reading the filters, so it
        // never refuses), but neither user nor account is shown.
        var inA = await server.GetJsonAsync("/connz?acc=A");
        Assert.Equal(["a1", "a2"], Named(inA).Select(Name).Order());
        Assert.Equal(2, inA.GetProperty("total").GetInt32());
        Assert.All(Named(inA), c => Assert.False(c.TryGetProperty("account", out _) || c.TryGetProperty("authorized_user", out _)));

        var closedInA = await server.GetJsonAsync("/connz?acc=A&auth=true&state=closed");
        var leaving = Assert.Single(Named(closedInA));
        Assert.Equal("a-leaving", Name(leaving));
        Assert.Equal("A", leaving.GetProperty("account").GetString());
        Assert.Equal(1, closedInA.GetProperty("total").GetInt32());
        Assert.Equal(3, (await server.GetJsonAsync("/connz?acc=A&state=any")).GetProperty("total").GetInt32());
        Assert.Empty(Named(await server.GetJsonAsync("/connz?acc=C&state=any")));

        // A closed connection of the global account keeps no account name in nats-server: acc=$G finds none closed.
        var closed = await server.GetJsonAsync("/connz?auth=true&state=closed");
        var globalLeaving = Assert.Single(Named(closed), c => Name(c) == "g-leaving");
        Assert.Equal("g", globalLeaving.GetProperty("authorized_user").GetString());
        Assert.False(globalLeaving.TryGetProperty("account", out _));
        var closedInGlobal = await server.GetJsonAsync("/connz?acc=%24G&state=closed");
        Assert.Equal(0, closedInGlobal.GetProperty("total").GetInt32());
        Assert.Equal(["g1"], Named(await server.GetJsonAsync("/connz?acc=%24G")).Select(Name));

        // The user filter narrows the page, not the total (nats-server counts before it).
        var usersA = await server.GetJsonAsync("/connz?user=a");
        Assert.Equal(["a1", "a2"], Named(usersA).Select(Name).Order());
        Assert.Equal(2, usersA.GetProperty("num_connections").GetInt32());
        Assert.Equal(4, usersA.GetProperty("total").GetInt32());
        var userAInB = await server.GetJsonAsync("/connz?acc=B&user=a&auth=1");
        Assert.Equal(0, userAInB.GetProperty("num_connections").GetInt32());
        Assert.Equal(1, userAInB.GetProperty("total").GetInt32());

        // An open connection asked for by cid is found whatever the account filter says; the total is the account's.
        var a1Cid = Named(inA).Single(c => Name(c) == "a1").GetProperty("cid").GetUInt64();
        var byCid = await server.GetJsonAsync($"/connz?acc=B&cid={a1Cid}");
        Assert.Equal(["a1"], Named(byCid).Select(Name));
        Assert.Equal(1, byCid.GetProperty("total").GetInt32());

        var unknown = await server.GetJsonAsync("/connz?acc=NOPE&auth=true");
        Assert.Equal("", unknown.GetProperty("server_id").GetString());
        Assert.Equal(JsonValueKind.Null, unknown.GetProperty("connections").ValueKind);
        Assert.Equal(0, unknown.GetProperty("total").GetInt32());

        // A connection that has not sent CONNECT yet is in the global account (nats-server registers every new client
        // with $G and moves it at CONNECT), so the other accounts' figures do not change. (The authorization timeout
        // is 30 s in this scenario, so it stays.)
        await using var silent = await RawClient.ConnectAsync(new Uri(server.Url).Port);
        await Eventually.AssertAsync(async () => (await server.GetJsonAsync("/connz")).GetProperty("total").GetInt32() == 5, "the silent connection to be listed");
        Assert.Equal(2, (await server.GetJsonAsync("/connz?acc=%24G")).GetProperty("total").GetInt32());
        Assert.Equal(2, (await server.GetJsonAsync("/accountz?acc=%24G")).GetProperty("account_detail").GetProperty("client_connections").GetInt32());
        Assert.Equal(2, Stat(await server.GetJsonAsync("/accstatz"), "$G")!.Value.GetProperty("conns").GetInt32());
        Assert.Equal(2, (await server.GetJsonAsync("/accountz?acc=A")).GetProperty("account_detail").GetProperty("client_connections").GetInt32());
    }

    [Theory(Timeout = 60_000)]
    [InlineData(ServerKind.Ours)]
    [InlineData(ServerKind.Reference)]
    public async Task Subsz_sums_every_account_or_shows_one_and_varz_counts_them_all(ServerKind kind)
    {
        await using var server = await Monitored.StartAsync(kind);
        await using var tenants = await Tenants.ConnectAsync(server);

        // Besides the scenario's subscriptions each client holds its reply inbox (NATS.Client.Core subscribes
        // _INBOX.<id>.* for its first ping): A has a1's foo, bar, a2's foo and two inboxes; the leaving clients'
        // inboxes were inserted and removed.
        Assert.Equal(5, (await server.GetJsonAsync("/subsz?acc=A")).GetProperty("num_subscriptions").GetInt32());
        Assert.Equal(2, (await server.GetJsonAsync("/subsz?acc=B")).GetProperty("num_subscriptions").GetInt32());
        Assert.Equal(0, (await server.GetJsonAsync("/subsz?acc=C")).GetProperty("num_subscriptions").GetInt32());
        Assert.Equal(0, (await server.GetJsonAsync("/subsz?acc=NOPE")).GetProperty("num_subscriptions").GetInt32());
        var total = await server.GetJsonAsync("/subsz");
        Assert.Equal(9, total.GetProperty("num_subscriptions").GetInt32());
        Assert.Equal(11, total.GetProperty("num_inserts").GetInt64());
        Assert.Equal(2, total.GetProperty("num_removes").GetInt64());
        Assert.Equal(9, (await server.GetJsonAsync("/varz")).GetProperty("subscriptions").GetInt32());

        var listA = await server.GetJsonAsync("/subsz?acc=A&subs=1");
        var entries = listA.GetProperty("subscriptions_list").EnumerateArray().ToList();
        Assert.Equal(
            ["A:_INBOX", "A:_INBOX", "A:bar", "A:foo", "A:foo"],
            entries.Select(e => e.GetProperty("account").GetString() + ":" + e.GetProperty("subject").GetString()!.Split('.')[0]).Order(StringComparer.Ordinal));
        Assert.Equal(5, listA.GetProperty("total").GetInt32());

        var foo = await server.GetJsonAsync("/subsz?subs=1&test=foo");
        Assert.Equal(["$G", "A", "A", "B"], foo.GetProperty("subscriptions_list").EnumerateArray().Select(e => e.GetProperty("account").GetString()).Order(StringComparer.Ordinal));

        // The total is the length of the page, as nats-server 2.9.10 sets it.
        var page = await server.GetJsonAsync("/subsz?subs=1&offset=1&limit=2");
        Assert.Equal(2, page.GetProperty("subscriptions_list").GetArrayLength());
        Assert.Equal(2, page.GetProperty("total").GetInt32());
    }

    [Theory(Timeout = 60_000)]
    [InlineData(ServerKind.Ours)]
    [InlineData(ServerKind.Reference)]
    public async Task Accountz_lists_every_account_and_details_one(ServerKind kind)
    {
        await using var server = await Monitored.StartAsync(kind);
        await using var tenants = await Tenants.ConnectAsync(server);

        var list = await server.GetJsonAsync("/accountz");
        Assert.Equal(["$G", "A", "B", "C"], list.GetProperty("accounts").EnumerateArray().Select(a => a.GetString()).Order(StringComparer.Ordinal));
        Assert.False(list.TryGetProperty("system_account", out _));
        Assert.False(list.TryGetProperty("account_detail", out _));

        var detail = (await server.GetJsonAsync("/accountz?acc=A")).GetProperty("account_detail");
        Assert.Equal("A", detail.GetProperty("account_name").GetString());
        Assert.Equal(2, detail.GetProperty("client_connections").GetInt32());
        Assert.Equal(5, detail.GetProperty("subscriptions").GetInt32());
        Assert.Equal(5, detail.GetProperty("sublist_stats").GetProperty("num_subscriptions").GetInt32());
        Assert.Equal(6, detail.GetProperty("sublist_stats").GetProperty("num_inserts").GetInt64());
        Assert.Equal(0, detail.GetProperty("leafnode_connections").GetInt32());
        Assert.False(detail.TryGetProperty("is_system", out _));
        Assert.False(detail.GetProperty("jetstream_enabled").GetBoolean());
        Assert.True(detail.GetProperty("complete").GetBoolean());
        var global = (await server.GetJsonAsync("/accountz?acc=%24G")).GetProperty("account_detail");
        Assert.Equal(1, global.GetProperty("client_connections").GetInt32());
        Assert.Equal(2, global.GetProperty("subscriptions").GetInt32());
        Assert.Equal(0, (await server.GetJsonAsync("/accountz?acc=C")).GetProperty("account_detail").GetProperty("client_connections").GetInt32());

        var (status, body) = await server.GetTextAsync("/accountz?acc=NOPE");
        Assert.Equal(HttpStatusCode.BadRequest, status);
        Assert.Equal("Account NOPE does not exist", body);
    }

    [Theory(Timeout = 60_000)]
    [InlineData(ServerKind.Ours)]
    [InlineData(ServerKind.Reference)]
    public async Task Accstatz_counts_connections_and_traffic_per_account_closed_connections_included(ServerKind kind)
    {
        await using var server = await Monitored.StartAsync(kind);
        await using var tenants = await Tenants.ConnectAsync(server);

        // The counters are added once the publisher's read is processed: wait for the last publish to show.
        await Eventually.AssertAsync(
            async () => Stat(await server.GetJsonAsync("/accstatz"), "B") is { } b && b.GetProperty("sent").GetProperty("msgs").GetInt64() == 1,
            "B's publish to be counted");

        var statz = await server.GetJsonAsync("/accstatz");
        Assert.Equal(["$G", "A", "B"], statz.GetProperty("account_statz").EnumerateArray().Select(s => s.GetProperty("acc").GetString()).Order(StringComparer.Ordinal));

        // A: the leaving connection published "hello" (5 bytes) to a1 and a2, then closed.
        var a = Stat(statz, "A")!.Value;
        Assert.Equal(2, a.GetProperty("conns").GetInt32());
        Assert.Equal(2, a.GetProperty("total_conns").GetInt32());
        Assert.Equal(0, a.GetProperty("leafnodes").GetInt32());
        Assert.Equal((1, 5), Data(a, "received"));
        Assert.Equal((2, 10), Data(a, "sent"));
        Assert.Equal(0, a.GetProperty("slow_consumers").GetInt64());

        // B: b1 published "hi" to its own subscription; $G: g1 published nothing.
        var b = Stat(statz, "B")!.Value;
        Assert.Equal(1, b.GetProperty("conns").GetInt32());
        Assert.Equal((1, 2), Data(b, "received"));
        Assert.Equal((1, 2), Data(b, "sent"));
        Assert.Equal((0, 0), Data(Stat(statz, "$G")!.Value, "received"));

        var unused = await server.GetJsonAsync("/accstatz?unused=true");
        var c = Stat(unused, "C")!.Value;
        Assert.Equal(0, c.GetProperty("conns").GetInt32());
        Assert.Equal((0, 0), Data(c, "sent"));

        var (status, body) = await server.GetTextAsync("/accstatz?unused=perhaps");
        Assert.Equal(HttpStatusCode.BadRequest, status);
        Assert.Equal("Error decoding boolean for 'unused': strconv.ParseBool: parsing \"perhaps\": invalid syntax", body);
    }

    [Fact(Timeout = 60_000)]
    public async Task Account_answers_have_the_reference_keys_and_kinds()
    {
        await using var reference = await Monitored.StartAsync(ServerKind.Reference);
        await using var ours = await Monitored.StartAsync(ServerKind.Ours);
        await using var referenceTenants = await Tenants.ConnectAsync(reference);
        await using var ourTenants = await Tenants.ConnectAsync(ours);
        foreach (var path in new[]
        {
            "/connz?auth=true&acc=A&subs=detail", "/connz?auth=true&acc=A&state=closed", "/connz?auth=true&acc=%24G", "/connz?acc=NOPE", "/subsz?acc=A&subs=1", "/subsz?acc=A", "/subsz?acc=C&subs=1", "/subsz?subs=1&test=nothing.here",
            "/accountz", "/accountz?acc=A", "/accountz?acc=C", "/accstatz", "/accstatz?unused=1",
        })
        {
            AssertSameKeys(path, await reference.GetJsonAsync(path), await ours.GetJsonAsync(path));
        }
    }

    [Theory(Timeout = 60_000)]
    [InlineData(ServerKind.Ours)]
    [InlineData(ServerKind.Reference)]
    public async Task Accountz_shows_stream_exports_and_imports_and_counts_shadow_subscriptions_in_the_exporter(ServerKind kind)
    {
        const string config = """
            no_system_account: true
            accounts {
              E: { users: [{user: e, password: e}], exports: [ {stream: "orders.>", accounts: [I]}, {stream: "pub.*"} ] }
              I: { users: [{user: i, password: i}], imports: [ {stream: {account: E, subject: "orders.>"}, prefix: p}, {stream: {account: E, subject: "pub.*"}, to: "q.$1"} ] }
            }
            """;
        await using var server = await Monitored.StartAsync(kind, config, options =>
        {
            options.NoSystemAccount = true;
            options.Accounts =
            [
                new AccountOptions
                {
                    Name = "E",
                    Users = [new UserOptions { User = "e", Password = "e" }],
                    Exports = new AccountExportOptions { Streams = [new StreamExportOptions { Subject = "orders.>", Accounts = ["I"] }, new StreamExportOptions { Subject = "pub.*" }] },
                },
                new AccountOptions
                {
                    Name = "I",
                    Users = [new UserOptions { User = "i", Password = "i" }],
                    Imports = new AccountImportOptions
                    {
                        Streams =
                        [
                            new StreamImportOptions { Account = "E", Subject = "orders.>", Prefix = "p" },
                            new StreamImportOptions { Account = "E", Subject = "pub.*", To = "q.$1" },
                        ],
                    },
                },
            ];
        });

        var exporter = (await server.GetJsonAsync("/accountz?acc=E")).GetProperty("account_detail");
        Assert.Equal(
            ["""{"subject":"orders.\u003E","type":"stream","approved_accounts":["I"]}""", """{"subject":"pub.*","type":"stream"}"""],
            Entries(exporter.GetProperty("exports")));
        Assert.False(exporter.TryGetProperty("imports", out _));
        var importer = (await server.GetJsonAsync("/accountz?acc=I")).GetProperty("account_detail");
        Assert.Equal(
            [
                """{"subject":"orders.\u003E","account":"E","local_subject":"p.orders.\u003E","type":"stream","invalid":false,"share":false,"tracking":false}""",
                """{"subject":"pub.*","account":"E","local_subject":"q.*","type":"stream","invalid":false,"share":false,"tracking":false}""",
            ],
            Entries(importer.GetProperty("imports")));
        Assert.False(importer.TryGetProperty("exports", out _));

        // A subscription of the importer matching both imports adds a shadow for each to the exporter's index.
        await using var subscriber = await NatsClients.ConnectAsync(server.Url, "i1", o => o with { AuthOpts = new NatsAuthOpts { Username = "i", Password = "i" } });
        await using var everything = await subscriber.SubscribeCoreAsync<string>(">");
        await subscriber.PingAsync();
        Assert.Equal(2, (await server.GetJsonAsync("/accountz?acc=E")).GetProperty("account_detail").GetProperty("subscriptions").GetInt32());
        await everything.UnsubscribeAsync();
        await subscriber.PingAsync();
        Assert.Equal(0, (await server.GetJsonAsync("/accountz?acc=E")).GetProperty("account_detail").GetProperty("subscriptions").GetInt32());

        static string[] Entries(JsonElement array) => [.. array.EnumerateArray().Select(e => JsonSerializer.Serialize(e)).Order(StringComparer.Ordinal)];
    }

    [Theory(Timeout = 60_000)]
    [InlineData(ServerKind.Ours)]
    [InlineData(ServerKind.Reference)]
    public async Task A_connection_refused_by_the_account_max_connections_is_recorded_in_that_account(ServerKind kind)
    {
        const string config = """
            no_system_account: true
            accounts { D: { users: [{user: d, password: d}], limits { max_connections: 1 } } }
            """;
        await using var server = await Monitored.StartAsync(kind, config, options => (options.NoSystemAccount, options.Accounts) = (true,
            [new AccountOptions { Name = "D", Users = [new UserOptions { User = "d", Password = "d" }], Limits = new AccountLimitOptions { MaxConnections = 1 } }]));
        await using var first = await NatsClients.ConnectAsync(server.Url, "d1", o => o with { AuthOpts = new NatsAuthOpts { Username = "d", Password = "d" } });
        await using var second = await RawClient.ConnectAsync(new Uri(server.Url).Port);
        await second.SendAsync("CONNECT {\"verbose\":false,\"name\":\"d2\",\"user\":\"d\",\"pass\":\"d\"}\r\nPING\r\n");
        Assert.Contains("-ERR 'maximum account active connections exceeded'", await second.ExpectClosedAsync());

        await Eventually.AssertAsync(async () => Named(await server.GetJsonAsync("/connz?state=closed&acc=D")).Any(), "the refused connection to be recorded");
        var refused = Assert.Single(Named(await server.GetJsonAsync("/connz?state=closed&acc=D&auth=true")));
        Assert.Equal("d2", Name(refused));
        Assert.Equal("D", refused.GetProperty("account").GetString());
        Assert.Equal("d", refused.GetProperty("authorized_user").GetString());
        Assert.Equal("Maximum Account Connections Exceeded", refused.GetProperty("reason").GetString());
        Assert.Equal(["d1"], Named(await server.GetJsonAsync("/connz?acc=D")).Select(Name));
        Assert.Equal(1, (await server.GetJsonAsync("/accountz?acc=D")).GetProperty("account_detail").GetProperty("client_connections").GetInt32());
    }

    [Fact(Timeout = 60_000)]
    public async Task A_reload_that_adds_and_removes_accounts_shows_in_every_endpoint()
    {
        static void Configure(BrokerOptions options, params string[] accounts)
        {
            options.Monitoring.Host = "127.0.0.1";
            options.Monitoring.Port = 0;
            options.NoSystemAccount = true;
            options.Accounts = [.. accounts.Select(name => new AccountOptions { Name = name, Users = [new UserOptions { User = name.ToLowerInvariant(), Password = "pw" }] })];
        }

        await using var broker = await MonitoredBroker.StartAsync(o => Configure(o, "A", "B"));
        await using var inB = await broker.ConnectAsync("{\"verbose\":false,\"name\":\"in-b\",\"user\":\"b\",\"pass\":\"pw\"}");
        await inB.SendAsync("SUB foo 1\r\n");
        await inB.PingAndCollectAsync();
        Assert.Equal(1, (await broker.GetJsonAsync("/subsz?acc=B")).GetProperty("num_subscriptions").GetInt32());

        var configuredAt = UpdateTime(await broker.GetJsonAsync("/accountz?acc=A"));
        var reloaded = new BrokerOptions { Host = "127.0.0.1", Port = broker.Broker.Port };
        Configure(reloaded, "A", "C");
        var result = await broker.Server.ReloadAsync(reloaded);
        Assert.True(result.Succeeded, result.Error);

        Assert.Equal(["$G", "A", "C"], (await broker.GetJsonAsync("/accountz")).GetProperty("accounts").EnumerateArray().Select(a => a.GetString()).Order(StringComparer.Ordinal));

        // Every account, $G too, takes the reload's time as its update time (nats-server stamps them all).
        Assert.True(UpdateTime(await broker.GetJsonAsync("/accountz?acc=A")) > configuredAt);
        Assert.True(UpdateTime(await broker.GetJsonAsync("/accountz?acc=%24G")) > configuredAt);
        var (status, body, response) = await broker.GetAsync("/accountz?acc=B");
        response.Dispose();
        Assert.Equal(HttpStatusCode.BadRequest, status);
        Assert.Equal("Account B does not exist", body);
        Assert.Equal(0, (await broker.GetJsonAsync("/accountz?acc=C")).GetProperty("account_detail").GetProperty("client_connections").GetInt32());
        Assert.Contains("C", Accounts(await broker.GetJsonAsync("/accstatz?unused=true")));
        Assert.DoesNotContain("B", Accounts(await broker.GetJsonAsync("/accstatz?unused=true")));

        // B's connection was closed by the reload; its record keeps the account, which no filter can name any more.
        await Eventually.AssertAsync(async () => Named(await broker.GetJsonAsync("/connz?state=closed")).Any(c => Name(c) == "in-b"), "B's connection to be closed");
        var closed = Assert.Single(Named(await broker.GetJsonAsync("/connz?state=closed&auth=true")), c => Name(c) == "in-b");
        Assert.Equal("B", closed.GetProperty("account").GetString());
        Assert.Equal(JsonValueKind.Null, (await broker.GetJsonAsync("/connz?state=closed&acc=B")).GetProperty("connections").ValueKind);
        Assert.Equal(0, (await broker.GetJsonAsync("/subsz")).GetProperty("num_subscriptions").GetInt32());

        static DateTime UpdateTime(JsonElement accountz) => accountz.GetProperty("account_detail").GetProperty("update_time").GetDateTime();

        static IEnumerable<string?> Accounts(JsonElement statz) => statz.GetProperty("account_statz").EnumerateArray().Select(s => s.GetProperty("acc").GetString());
    }

    /// <summary>Objects have exactly the reference's keys (both ways) with the same kinds; arrays are compared by their first element.</summary>
    private static void AssertSameKeys(string path, JsonElement expected, JsonElement actual)
    {
        Assert.True(expected.ValueKind == actual.ValueKind, $"{path}: {expected.ValueKind} in nats-server, {actual.ValueKind} here");
        if (expected.ValueKind == JsonValueKind.Object)
        {
            Assert.Equal(
                expected.EnumerateObject().Select(p => p.Name).Order(StringComparer.Ordinal),
                actual.EnumerateObject().Select(p => p.Name).Order(StringComparer.Ordinal));
            foreach (var property in expected.EnumerateObject())
            {
                AssertSameKeys(path + "." + property.Name, property.Value, actual.GetProperty(property.Name));
            }
        }
        else if (expected.ValueKind == JsonValueKind.Array)
        {
            Assert.Equal(expected.GetArrayLength(), actual.GetArrayLength());
            if (expected.GetArrayLength() > 0)
            {
                AssertSameKeys(path + "[0]", expected[0], actual[0]);
            }
        }
    }

    private static IEnumerable<JsonElement> Named(JsonElement connz)
        => connz.GetProperty("connections").EnumerateArray().Where(c => c.TryGetProperty("name", out _));

    private static string Name(JsonElement connection) => connection.GetProperty("name").GetString()!;

    private static JsonElement? Stat(JsonElement statz, string account)
    {
        foreach (var stat in statz.GetProperty("account_statz").EnumerateArray())
        {
            if (stat.GetProperty("acc").GetString() == account)
            {
                return stat;
            }
        }

        return null;
    }

    private static (long Messages, long Bytes) Data(JsonElement stat, string direction)
        => (stat.GetProperty(direction).GetProperty("msgs").GetInt64(), stat.GetProperty(direction).GetProperty("bytes").GetInt64());

    /// <summary>
    /// The clients of the scenario, connected with NATS.Client.Core: a1 (foo, bar) and a2 (foo) in A, b1 (foo, and
    /// publishes "hi" to it) in B, g1 (foo) in the global account, a-leaving in A, which publishes "hello" to foo and
    /// closes, and g-leaving in the global account, which only closes. Returns once the closes are recorded.
    /// </summary>
    private sealed class Tenants : IAsyncDisposable
    {
        private readonly List<NatsConnection> connections = [];
        private readonly List<IAsyncDisposable> subscriptions = [];

        public static async Task<Tenants> ConnectAsync(Monitored server)
        {
            var tenants = new Tenants();
            var a1 = await tenants.ConnectAsync(server, "a1", "a", "foo", "bar");
            var a2 = await tenants.ConnectAsync(server, "a2", "a", "foo");
            var b1 = await tenants.ConnectAsync(server, "b1", "b", "foo");
            var g1 = await tenants.ConnectAsync(server, "g1", "g", "foo");
            foreach (var connection in new[] { a1, a2, b1, g1 })
            {
                await connection.PingAsync();
            }

            await using (var leaving = await NatsClients.ConnectAsync(server.Url, "a-leaving", o => Login(o, "a")))
            {
                await leaving.PublishAsync("foo", "hello");
                await leaving.PingAsync();
            }

            await using (var leaving = await NatsClients.ConnectAsync(server.Url, "g-leaving", o => Login(o, "g")))
            {
                await leaving.PingAsync();
            }

            await b1.PublishAsync("foo", "hi");
            await b1.PingAsync();
            await Eventually.AssertAsync(
                async () => Named(await server.GetJsonAsync("/connz?state=closed")).Count(c => Name(c).EndsWith("-leaving", StringComparison.Ordinal)) == 2,
                "the leaving connections' closes to be recorded");
            return tenants;
        }

        public async ValueTask DisposeAsync()
        {
            foreach (var subscription in subscriptions)
            {
                await subscription.DisposeAsync();
            }

            foreach (var connection in connections)
            {
                await connection.DisposeAsync();
            }
        }

        private static NatsOpts Login(NatsOpts options, string user)
            => options with { AuthOpts = new NatsAuthOpts { Username = user, Password = user } };

        private async Task<NatsConnection> ConnectAsync(Monitored server, string name, string user, params string[] subjects)
        {
            var connection = await NatsClients.ConnectAsync(server.Url, name, o => Login(o, user));
            connections.Add(connection);
            foreach (var subject in subjects)
            {
                subscriptions.Add(await connection.SubscribeCoreAsync<string>(subject));
            }

            return connection;
        }
    }

    /// <summary>Our broker or nats-server with the scenario's accounts and HTTP monitoring on a free port.</summary>
    internal sealed class Monitored : IAsyncDisposable
    {
        private readonly IAsyncDisposable server;

        private Monitored(IAsyncDisposable server, string url, int monitorPort)
        {
            this.server = server;
            Url = url;
            Http = new HttpClient { BaseAddress = new Uri($"http://127.0.0.1:{monitorPort}"), Timeout = TimeSpan.FromSeconds(10) };
        }

        public string Url { get; }

        public HttpClient Http { get; }

        public static Task<Monitored> StartAsync(ServerKind kind) => StartAsync(kind, ReferenceConfig, Configure);

        public static async Task<Monitored> StartAsync(ServerKind kind, string referenceConfig, Action<BrokerOptions> configure)
        {
            if (kind == ServerKind.Ours)
            {
                var broker = await MonitoredBroker.StartAsync(configure);
                return new Monitored(broker, broker.Broker.Url, broker.MonitorEndPoint.Port);
            }

            var monitorPort = Ports.GetFreePort();
            var reference = await ReferenceServer.StartAsync(referenceConfig, "-m", monitorPort.ToString(CultureInfo.InvariantCulture));
            await Ports.WaitUntilListeningAsync(monitorPort, TimeSpan.FromSeconds(10));
            return new Monitored(reference, reference.Url, monitorPort);
        }

        public async Task<JsonElement> GetJsonAsync(string pathAndQuery)
        {
            var (status, body) = await GetTextAsync(pathAndQuery);
            Assert.True(status == HttpStatusCode.OK, $"GET {pathAndQuery}: {(int)status} {body}");
            using var document = JsonDocument.Parse(body);
            return document.RootElement.Clone();
        }

        public async Task<(HttpStatusCode Status, string Body)> GetTextAsync(string pathAndQuery)
        {
            using var response = await Http.GetAsync(pathAndQuery);
            return (response.StatusCode, await response.Content.ReadAsStringAsync());
        }

        public async ValueTask DisposeAsync()
        {
            Http.Dispose();
            await server.DisposeAsync();
        }

        private static void Configure(BrokerOptions options)
        {
            options.NoSystemAccount = true;
            options.Accounts =
            [
                new AccountOptions { Name = "A", Users = [new UserOptions { User = "a", Password = "a" }] },
                new AccountOptions { Name = "B", Users = [new UserOptions { User = "b", Password = "b" }] },
                new AccountOptions { Name = "C" },
            ];
            options.Authorization.Users = [new UserOptions { User = "g", Password = "g" }];

            // Long enough for a connection that never sends CONNECT to be looked at on a busy machine.
            options.Authorization.Timeout = TimeSpan.FromSeconds(30);
        }
    }
}
