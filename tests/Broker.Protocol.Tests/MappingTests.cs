using Broker.Core;
using Broker.Core.Auth;

namespace Broker.Protocol.Tests;

/// <summary>
/// Subject mappings through raw sockets on both servers: the MSG subject after each of nats-server 2.9.10's functions,
/// the same partitions for the same subjects, weighted destinations over 10,000 publishes, an account's mappings
/// felt only by its own clients, and the permission check on the mapped subject.
/// </summary>
public sealed class MappingTests
{
    public static TheoryData<ServerKind> Servers => new() { ServerKind.Ours, ServerKind.Reference };

    private const string Connect = "CONNECT {\"verbose\":false}\r\n";

    private static readonly (string Source, string Destination)[] Functions =
    [
        ("simple", "dest.simple"),
        ("wc.*.*", "wc.$2.$1"),
        ("fn.*.*", "fn.{{wildcard(2)}}.{{ Wildcard(1) }}"),
        ("part.*", "part.{{partition(5,1)}}.$1"),
        ("sfl.*", "sfl.{{splitFromLeft(1,2)}}"),
        ("sfr.*", "sfr.{{SplitFromRight(1, 2)}}"),
        ("slfl.*", "slfl.{{sliceFromLeft(1,2)}}"),
        ("slfr.*", "slfr.{{SliceFromRight(1,2)}}"),
        ("split.*", "split.{{split(1,-)}}"),
        ("fwc.*.>", "moved.$1.>"),
        ("literal", "{{wildcard(1)}}"),
    ];

    private static void Add(IList<MappingOptions> list, string source, params (string Subject, int Weight)[] destinations)
        => list.Add(new MappingOptions
        {
            Source = source,
            Destinations = [.. destinations.Select(d => new MappingDestinationOptions { Subject = d.Subject, Weight = d.Weight })],
        });

    private static string Conf(IEnumerable<(string Source, string Destination)> mappings)
        => "mappings {\n" + string.Concat(mappings.Select(m => $"  \"{m.Source}\": \"{m.Destination}\"\n")) + "}\n";

    private static Task<ServerUnderTest> StartWithFunctionsAsync(ServerKind kind) => ServerUnderTest.StartAsync(
        kind,
        o =>
        {
            foreach (var (source, destination) in Functions)
            {
                Add(o.Mappings, source, (destination, 100));
            }
        },
        Conf(Functions));

    [Theory(Timeout = 30_000)]
    [MemberData(nameof(Servers))]
    public async Task Each_function_maps_the_delivered_subject(ServerKind kind)
    {
        await using var server = await StartWithFunctionsAsync(kind);
        var transcript = await server.RunAsync(Connect + "SUB > 1\r\n"
            + "PUB simple 1\r\na\r\nPUB wc.x.y 1\r\nb\r\nPUB fn.x.y 1\r\nc\r\nPUB sfl.abcde 1\r\nd\r\nPUB sfr.abcde 1\r\ne\r\n"
            + "PUB slfl.abcde 1\r\nf\r\nPUB slfr.abcde 1\r\ng\r\nPUB split.-ab--cd- 1\r\nh\r\nPUB fwc.x.y.z 1\r\ni\r\nPUB literal 1\r\nj\r\n"
            + "PUB unmapped.x 1\r\nk\r\n");

        Assert.Equal(
            [
                "MSG dest.simple 1 1", "a", "MSG wc.y.x 1 1", "b", "MSG fn.y.x 1 1", "c", "MSG sfl.ab.cde 1 1", "d",
                "MSG sfr.abc.de 1 1", "e", "MSG slfl.ab.cd.e 1 1", "f", "MSG slfr.a.bc.de 1 1", "g", "MSG split.ab.cd 1 1", "h",
                "MSG moved.x.y.z 1 1", "i", "MSG {{wildcard(1)}} 1 1", "j", "MSG unmapped.x 1 1", "k", "PONG",
            ],
            transcript.Lines);
    }

    [Fact(Timeout = 60_000)]
    public async Task Partitions_are_the_ones_nats_server_picks()
    {
        var keys = Enumerable.Range(0, 50).Select(i => "key" + i * 7919).ToArray();
        var input = Connect + "SUB part.> 1\r\n" + string.Concat(keys.Select(k => $"PUB part.{k} 0\r\n\r\n"));

        var partitions = new Dictionary<ServerKind, string[]>();
        foreach (var kind in new[] { ServerKind.Ours, ServerKind.Reference })
        {
            await using var server = await StartWithFunctionsAsync(kind);
            var lines = (await server.RunAsync(input)).Lines.Where(l => l.StartsWith("MSG ", StringComparison.Ordinal)).ToArray();
            Assert.Equal(keys.Length, lines.Length);
            partitions[kind] = [.. lines.Select(l => l.Split(' ')[1])];
        }

        Assert.Equal(partitions[ServerKind.Reference], partitions[ServerKind.Ours]);

        // Spread over the five partitions, each subject keeping its key after the partition.
        Assert.Equal(5, partitions[ServerKind.Ours].Select(s => s.Split('.')[1]).Distinct().Count());
        Assert.Equal(keys, partitions[ServerKind.Ours].Select(s => s.Split('.')[2]));
    }

    [Theory(Timeout = 120_000)]
    [MemberData(nameof(Servers))]
    public async Task Weighted_destinations_split_ten_thousand_publishes_and_the_rest_keeps_its_subject(ServerKind kind)
    {
        await using var server = await ServerUnderTest.StartAsync(
            kind,
            o => Add(o.Mappings, "weighted", ("w.a", 30), ("w.b", 20)),
            "mappings {\n  weighted: [ {dest: w.a, weight: 30%}, {destination: w.b, weight: 20} ]\n}\n");
        await using var client = await server.ConnectAsync();
        await client.SendAsync(Connect + "SUB w.a 1\r\nSUB w.b 2\r\nSUB weighted 3\r\n");
        Assert.Equal(["PONG"], (await client.PingAndCollectAsync()).Lines);

        const int total = 10_000;
        var batch = string.Concat(Enumerable.Repeat("PUB weighted 0\r\n\r\n", 1_000));
        for (var i = 0; i < total / 1_000; i++)
        {
            await client.SendAsync(batch);
        }

        var lines = (await client.PingAndCollectAsync(TimeSpan.FromSeconds(60))).Lines.Where(l => l.StartsWith("MSG ", StringComparison.Ordinal)).ToList();
        Assert.Equal(total, lines.Count);
        var counts = lines.GroupBy(l => l.Split(' ')[1]).ToDictionary(g => g.Key, g => g.Count());
        Assert.InRange(counts["w.a"], 2_700, 3_300);
        Assert.InRange(counts["w.b"], 1_700, 2_300);
        Assert.InRange(counts["weighted"], 4_700, 5_300);
    }

    [Theory(Timeout = 30_000)]
    [MemberData(nameof(Servers))]
    public async Task A_mapping_of_account_B_is_not_applied_in_A(ServerKind kind)
    {
        await using var server = await ServerUnderTest.StartAsync(
            kind,
            o =>
            {
                o.Accounts.Add(new AccountOptions { Name = "A", Users = [new() { User = "a", Password = "a" }] });
                var b = new AccountOptions { Name = "B", Users = [new() { User = "b", Password = "b" }] };
                Add(b.Mappings, "orders.*", ("mapped.$1", 100));
                o.Accounts.Add(b);
            },
            "accounts {\n  A: { users: [ {user: a, password: a} ] }\n  B: {\n    users: [ {user: b, password: b} ]\n    mappings: { \"orders.*\": \"mapped.$1\" }\n  }\n}\n");

        // CONNECT is answered before publishing: nats-server reads whether the account has mappings once per socket
        // read, from the account the connection was in when the read began ($G before CONNECT).
        Assert.Equal(["MSG orders.1 1 1", "x", "PONG"], await PublishAsAsync(server, "a", "PUB orders.1 1\r\nx\r\n"));
        Assert.Equal(["MSG mapped.1 1 1", "y", "PONG"], await PublishAsAsync(server, "b", "PUB orders.1 1\r\ny\r\n"));
    }

    private static async Task<IReadOnlyList<string>> PublishAsAsync(ServerUnderTest server, string user, string publish)
    {
        await using var client = await server.ConnectAsync();
        await client.SendAsync($"CONNECT {{\"user\":\"{user}\",\"pass\":\"{user}\",\"verbose\":false}}\r\nSUB > 1\r\n");
        Assert.Equal(["PONG"], (await client.PingAndCollectAsync()).Lines);
        await client.SendAsync(publish);
        return (await client.PingAndCollectAsync()).Lines;
    }

    [Theory(Timeout = 30_000)]
    [MemberData(nameof(Servers))]
    public async Task Publish_permissions_are_checked_on_the_mapped_subject(ServerKind kind)
    {
        await using var server = await ServerUnderTest.StartAsync(
            kind,
            o =>
            {
                o.Authorization.Users.Add(new UserOptions
                {
                    User = "u",
                    Password = "u",
                    Permissions = new PermissionsOptions { Publish = new SubjectPermissionOptions { Allow = ["in"] } },
                });
                Add(o.Mappings, "in", ("out", 100));
            },
            "authorization { users: [ {user: u, password: u, permissions: { publish: { allow: [\"in\"] } } } ] }\nmappings { in: out }\n");

        Assert.Equal(["-ERR 'Permissions Violation for Publish to \"out\"'", "PONG"], await PublishAsAsync(server, "u", "PUB in 1\r\nx\r\n"));
    }

    [Theory(Timeout = 30_000)]
    [MemberData(nameof(Servers))]
    public async Task A_request_is_mapped_and_its_reply_is_not(ServerKind kind)
    {
        await using var server = await ServerUnderTest.StartAsync(kind, o => Add(o.Mappings, "svc", ("svc.v2", 100)), "mappings { svc: svc.v2 }\n");
        var transcript = await server.RunAsync(Connect + "SUB svc.v2 1\r\nSUB reply 2\r\nPUB svc reply 1\r\nq\r\nPUB reply 1\r\nr\r\n");
        Assert.Equal(["MSG svc.v2 1 reply 1", "q", "MSG reply 2 1", "r", "PONG"], transcript.Lines);
    }

    /// <summary>Ours only: nats-server 2.9.10 applies a reload's mappings to live connections the same way (checked by hand with SIGHUP).</summary>
    [Fact(Timeout = 30_000)]
    public async Task A_reload_changes_the_mappings_of_live_connections()
    {
        await using var broker = await TestBroker.StartAsync(o => Add(o.Mappings, "a", ("x", 100)));
        await using var client = await RawClient.ConnectAsync(broker.EndPoint);
        await client.SendAsync(Connect + "SUB x 1\r\nSUB y 2\r\nSUB a 3\r\nPUB a 1\r\n1\r\n");
        Assert.Equal(["MSG x 1 1", "1", "PONG"], (await client.PingAndCollectAsync()).Lines);

        var options = new BrokerOptions { Host = "127.0.0.1", Port = broker.Port };
        Add(options.Mappings, "a", ("y", 100));
        Assert.True((await broker.Server.ReloadAsync(options)).Succeeded);
        await client.SendAsync("PUB a 1\r\n2\r\n");
        Assert.Equal(["MSG y 2 1", "2", "PONG"], (await client.PingAndCollectAsync()).Lines);

        Assert.True((await broker.Server.ReloadAsync(new BrokerOptions { Host = "127.0.0.1", Port = broker.Port })).Succeeded);
        await client.SendAsync("PUB a 1\r\n3\r\n");
        Assert.Equal(["MSG a 3 1", "3", "PONG"], (await client.PingAndCollectAsync()).Lines);
    }
}
