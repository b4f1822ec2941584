using Broker.Core;
using Broker.Core.Auth;
using Broker.TestKit;

namespace Broker.Security.Tests;

/// <summary>
/// Stream exports and imports between accounts as raw-socket transcripts, the same on our broker and nats-server
/// 2.9.10 (same accounts on both): the importer's subscribers receive the exporter's publishes under the prefix, the
/// <c>to</c> subject or the published subject, for exact, narrower, wider and overlapping subscriptions; nothing flows
/// back or to accounts without the import; UNSUB ends it; the importer's subscribe permissions still apply.
/// </summary>
public sealed class AccountImportTests
{
    private const string Conf = """
        accounts {
          A: {
            users: [{user: a, password: a}]
            exports: [ {stream: "orders.>", accounts: [B]}, {stream: "public.*"}, {stream: "news.*.*"} ]
          }
          B: {
            users: [{user: b, password: b}, {user: bd, password: bd, permissions: { subscribe: { deny: "p.orders.secret" } } }]
            imports: [
              {stream: {account: A, subject: "orders.>"}, prefix: p}
              {stream: {account: A, subject: "public.*"}, to: "pub.$1"}
              {stream: {account: A, subject: "news.*.*"}, to: "headlines.$2.$1"}
            ]
          }
          C: {
            users: [{user: c, password: c}]
            imports: [ {stream: {account: A, subject: "public.*"}} ]
          }
        }
        """;

    public static TheoryData<ServerKind> Servers => new() { ServerKind.Ours, ServerKind.Reference };

    private static void Accounts(BrokerOptions options)
    {
        options.Accounts.Add(new AccountOptions
        {
            Name = "A",
            Users = [AccountIsolationTests.User("a")],
            Exports = new AccountExportOptions
            {
                Streams =
                [
                    new StreamExportOptions { Subject = "orders.>", Accounts = ["B"] },
                    new StreamExportOptions { Subject = "public.*" },
                    new StreamExportOptions { Subject = "news.*.*" },
                ],
            },
        });
        options.Accounts.Add(new AccountOptions
        {
            Name = "B",
            Users =
            [
                AccountIsolationTests.User("b"),
                new UserOptions
                {
                    User = "bd",
                    Password = "bd",
                    Permissions = new PermissionsOptions { Subscribe = new SubjectPermissionOptions { Deny = ["p.orders.secret"] } },
                },
            ],
            Imports = new AccountImportOptions
            {
                Streams =
                [
                    new StreamImportOptions { Account = "A", Subject = "orders.>", Prefix = "p" },
                    new StreamImportOptions { Account = "A", Subject = "public.*", To = "pub.$1" },
                    new StreamImportOptions { Account = "A", Subject = "news.*.*", To = "headlines.$2.$1" },
                ],
            },
        });
        options.Accounts.Add(new AccountOptions
        {
            Name = "C",
            Users = [AccountIsolationTests.User("c")],
            Imports = new AccountImportOptions { Streams = [new StreamImportOptions { Account = "A", Subject = "public.*" }] },
        });
    }

    private static async Task<RawClient> ConnectAsync(ServerUnderTest server, string user)
    {
        var client = await server.ConnectAsync();
        await client.SendAsync($"CONNECT {{\"user\":\"{user}\",\"pass\":\"{user}\",\"verbose\":false}}\r\n");
        Assert.Equal(["PONG"], (await client.PingAndCollectAsync()).Lines);
        return client;
    }

    /// <summary>Subscribes, publishes from A, and returns what the subscriber got up to its PONG.</summary>
    private static async Task<IReadOnlyList<string>> ReceiveAsync(ServerKind kind, string user, string subscribe, params string[] published)
    {
        await using var server = await ServerUnderTest.StartAsync(kind, Accounts, Conf);
        await using var subscriber = await ConnectAsync(server, user);
        await using var publisher = await ConnectAsync(server, "a");
        await subscriber.SendAsync(subscribe);
        Assert.Equal(["PONG"], (await subscriber.PingAndCollectAsync()).Lines);
        foreach (var subject in published)
        {
            await publisher.SendAsync($"PUB {subject} 2\r\nhi\r\n");
        }

        Assert.Equal(["PONG"], (await publisher.PingAndCollectAsync()).Lines);
        return (await subscriber.PingAndCollectAsync()).Lines;
    }

    [Theory(Timeout = 30_000)]
    [MemberData(nameof(Servers))]
    public async Task Prefix_import_delivers_under_the_prefix(ServerKind kind)
    {
        var lines = await ReceiveAsync(kind, "b", "SUB p.orders.> 1\r\n", "orders.1", "orders.new.2", "other.1");
        Assert.Equal(["MSG p.orders.1 1 2", "hi", "MSG p.orders.new.2 1 2", "hi", "PONG"], lines);
    }

    [Theory(Timeout = 30_000)]
    [MemberData(nameof(Servers))]
    public async Task Narrower_and_overlapping_subscriptions_receive_only_their_part(ServerKind kind)
    {
        var lines = await ReceiveAsync(kind, "b", "SUB p.orders.new 1\r\nSUB p.*.2 2\r\nSUB *.orders.* 3\r\n", "orders.1", "orders.new", "orders.2", "orders.new.2");
        Assert.Equal(
            ["MSG p.orders.1 3 2", "hi", "MSG p.orders.2 2 2", "hi", "MSG p.orders.2 3 2", "hi", "MSG p.orders.new 1 2", "hi", "MSG p.orders.new 3 2", "hi", "PONG"],
            Sorted(lines));
    }

    [Theory(Timeout = 30_000)]
    [MemberData(nameof(Servers))]
    public async Task To_import_maps_the_wildcards(ServerKind kind)
    {
        var lines = await ReceiveAsync(kind, "b", "SUB pub.* 1\r\nSUB headlines.> 2\r\n", "public.x", "news.eu.sports");
        Assert.Equal(["MSG pub.x 1 2", "hi", "MSG headlines.sports.eu 2 2", "hi", "PONG"], lines);
    }

    [Theory(Timeout = 30_000)]
    [MemberData(nameof(Servers))]
    public async Task Import_without_prefix_or_to_delivers_the_published_subject(ServerKind kind)
    {
        // C imports public.* only: orders.> is exported to B alone.
        var lines = await ReceiveAsync(kind, "c", "SUB > 1\r\n", "public.x", "orders.1", "news.a.b");
        Assert.Equal(["MSG public.x 1 2", "hi", "PONG"], lines);
    }

    [Theory(Timeout = 30_000)]
    [MemberData(nameof(Servers))]
    public async Task Full_wildcard_subscription_receives_every_import(ServerKind kind)
    {
        var lines = await ReceiveAsync(kind, "b", "SUB > 1\r\n", "orders.1", "public.x", "news.a.b", "private.1");
        Assert.Equal(["MSG p.orders.1 1 2", "hi", "MSG pub.x 1 2", "hi", "MSG headlines.b.a 1 2", "hi", "PONG"], lines);
    }

    [Theory(Timeout = 30_000)]
    [MemberData(nameof(Servers))]
    public async Task Importer_subscribe_deny_applies_to_the_delivered_subject(ServerKind kind)
    {
        var lines = await ReceiveAsync(kind, "bd", "SUB p.orders.* 1\r\n", "orders.secret", "orders.open");
        Assert.Equal(["MSG p.orders.open 1 2", "hi", "PONG"], lines);
    }

    [Theory(Timeout = 30_000)]
    [MemberData(nameof(Servers))]
    public async Task Reply_subject_passes_through_and_nothing_flows_back(ServerKind kind)
    {
        await using var server = await ServerUnderTest.StartAsync(kind, Accounts, Conf);
        await using var importer = await ConnectAsync(server, "b");
        await using var exporter = await ConnectAsync(server, "a");
        await importer.SendAsync("SUB p.> 1\r\nSUB orders.> 2\r\n");
        await exporter.SendAsync("SUB orders.> 1\r\nSUB p.> 2\r\n");
        Assert.Equal(["PONG"], (await importer.PingAndCollectAsync()).Lines);
        Assert.Equal(["PONG"], (await exporter.PingAndCollectAsync()).Lines);

        await exporter.SendAsync("PUB orders.1 _INBOX.x 2\r\nhi\r\n");
        Assert.Equal(["MSG orders.1 1 _INBOX.x 2", "hi", "PONG"], (await exporter.PingAndCollectAsync()).Lines);
        await importer.SendAsync("PUB orders.2 2\r\nhi\r\nPUB p.orders.3 2\r\nhi\r\n");
        Assert.Equal(["MSG p.orders.1 1 _INBOX.x 2", "hi", "MSG orders.2 2 2", "hi", "MSG p.orders.3 1 2", "hi", "PONG"], (await importer.PingAndCollectAsync()).Lines);
        Assert.Equal(["PONG"], (await exporter.PingAndCollectAsync()).Lines);
    }

    [Theory(Timeout = 30_000)]
    [MemberData(nameof(Servers))]
    public async Task Unsubscribe_ends_the_import_and_an_auto_unsubscribe_limit_counts_no_imported_message(ServerKind kind)
    {
        await using var server = await ServerUnderTest.StartAsync(kind, Accounts, Conf);
        await using var importer = await ConnectAsync(server, "b");
        await using var exporter = await ConnectAsync(server, "a");
        await importer.SendAsync("SUB p.orders.> 1\r\nSUB pub.* 2\r\nUNSUB 2 1\r\n");
        Assert.Equal(["PONG"], (await importer.PingAndCollectAsync()).Lines);
        await exporter.SendAsync("PUB orders.1 2\r\nhi\r\nPUB public.1 2\r\nhi\r\nPUB public.2 2\r\nhi\r\n");
        Assert.Equal(["PONG"], (await exporter.PingAndCollectAsync()).Lines);
        Assert.Equal(["MSG p.orders.1 1 2", "hi", "MSG pub.1 2 2", "hi", "MSG pub.2 2 2", "hi", "PONG"], (await importer.PingAndCollectAsync()).Lines);

        await importer.SendAsync("UNSUB 1\r\n");
        Assert.Equal(["PONG"], (await importer.PingAndCollectAsync()).Lines);
        await exporter.SendAsync("PUB orders.2 2\r\nhi\r\nPUB public.3 2\r\nhi\r\n");
        Assert.Equal(["PONG"], (await exporter.PingAndCollectAsync()).Lines);
        Assert.Equal(["MSG pub.3 2 2", "hi", "PONG"], (await importer.PingAndCollectAsync()).Lines);

        // A message of the importer's own account counts: the limit of 1 ends subscription 2 and its import with it.
        await importer.SendAsync("PUB pub.own 2\r\nhi\r\n");
        Assert.Equal(["MSG pub.own 2 2", "hi", "PONG"], (await importer.PingAndCollectAsync()).Lines);
        await exporter.SendAsync("PUB public.4 2\r\nhi\r\n");
        Assert.Equal(["PONG"], (await exporter.PingAndCollectAsync()).Lines);
        Assert.Equal(["PONG"], (await importer.PingAndCollectAsync()).Lines);
    }

    [Theory(Timeout = 30_000)]
    [MemberData(nameof(Servers))]
    public async Task Closing_the_importer_removes_its_shadows(ServerKind kind)
    {
        await using var server = await ServerUnderTest.StartAsync(kind, Accounts, Conf);
        await using var exporter = await ConnectAsync(server, "a");
        var importer = await ConnectAsync(server, "b");
        await importer.SendAsync("SUB p.orders.> 1\r\n");
        Assert.Equal(["PONG"], (await importer.PingAndCollectAsync()).Lines);
        await importer.DisposeAsync();

        // With monitoring off, the exporter's view: a request with no responder anywhere gets the 503 again.
        await exporter.SendAsync("CONNECT {\"user\":\"a\",\"pass\":\"a\",\"verbose\":false,\"headers\":true,\"no_responders\":true}\r\nSUB _INBOX.1 9\r\n");
        await Eventually.AssertAsync(
            async () =>
            {
                await exporter.SendAsync("PUB orders.1 _INBOX.1 2\r\nhi\r\n");
                var lines = (await exporter.PingAndCollectAsync()).Lines;
                return lines.Count > 1 && lines[0].StartsWith("HMSG _INBOX.1 9 ", StringComparison.Ordinal);
            },
            "the 503 once the importer's shadow is gone");
    }

    [Theory(Timeout = 30_000)]
    [MemberData(nameof(Servers))]
    public async Task A_chain_of_imports_loads_and_each_import_carries_only_its_exporters_own_publishes(ServerKind kind)
    {
        // A -> B (prefix b) -> C (prefix c): not a cycle. A message that reached B through its import is not published
        // in B again, so C gets B's own publishes only.
        const string conf = """
            accounts {
              A: { users: [{user: a, password: a}], exports: [ {stream: "x.>"} ] }
              B: { users: [{user: b, password: b}], exports: [ {stream: "b.x.>"} ], imports: [ {stream: {account: A, subject: "x.>"}, prefix: b} ] }
              C: { users: [{user: c, password: c}], imports: [ {stream: {account: B, subject: "b.x.>"}, prefix: c} ] }
            }
            """;
        await using var server = await ServerUnderTest.StartAsync(
            kind,
            o => o.Accounts =
            [
                new AccountOptions { Name = "A", Users = [AccountIsolationTests.User("a")], Exports = new AccountExportOptions { Streams = [new StreamExportOptions { Subject = "x.>" }] } },
                new AccountOptions
                {
                    Name = "B",
                    Users = [AccountIsolationTests.User("b")],
                    Exports = new AccountExportOptions { Streams = [new StreamExportOptions { Subject = "b.x.>" }] },
                    Imports = new AccountImportOptions { Streams = [new StreamImportOptions { Account = "A", Subject = "x.>", Prefix = "b" }] },
                },
                new AccountOptions
                {
                    Name = "C",
                    Users = [AccountIsolationTests.User("c")],
                    Imports = new AccountImportOptions { Streams = [new StreamImportOptions { Account = "B", Subject = "b.x.>", Prefix = "c" }] },
                },
            ],
            conf);
        await using var inB = await ConnectAsync(server, "b");
        await using var inC = await ConnectAsync(server, "c");
        await using var fromA = await ConnectAsync(server, "a");
        await inB.SendAsync("SUB b.x.> 1\r\n");
        await inC.SendAsync("SUB > 1\r\n");
        Assert.Equal(["PONG"], (await inB.PingAndCollectAsync()).Lines);
        Assert.Equal(["PONG"], (await inC.PingAndCollectAsync()).Lines);

        await fromA.SendAsync("PUB x.1 2\r\nhi\r\n");
        Assert.Equal(["PONG"], (await fromA.PingAndCollectAsync()).Lines);
        await inB.SendAsync("PUB b.x.2 2\r\nhi\r\n");
        Assert.Equal(["MSG b.x.1 1 2", "hi", "MSG b.x.2 1 2", "hi", "PONG"], (await inB.PingAndCollectAsync()).Lines);
        Assert.Equal(["MSG c.b.x.2 1 2", "hi", "PONG"], (await inC.PingAndCollectAsync()).Lines);
    }

    private static string[] Sorted(IReadOnlyList<string> lines)
    {
        // MSG lines with their payloads, in a stable order (several subscriptions of one client may come in any order).
        var pairs = new List<string>();
        for (var i = 0; i + 1 < lines.Count; i += 2)
        {
            pairs.Add(lines[i] + "\n" + lines[i + 1]);
        }

        return [.. pairs.Order(StringComparer.Ordinal).SelectMany(p => p.Split('\n')), lines[^1]];
    }
}
