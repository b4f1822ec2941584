using Broker.Core;
using Broker.Core.Auth;

namespace Broker.Monitoring.Tests;

/// <summary>
/// /accountz <c>?acc=X</c> <c>mappings</c> on both servers: the destinations as nats-server keeps them (ordered by
/// weight, weights summed, the remainder on the source last, cluster-scoped ones after them), keys sorted; absent for
/// an account without mappings.
/// </summary>
public sealed class MappingMonitoringTests
{
    private const string ReferenceConfig = """
        no_system_account: true
        mappings {
          "orders.*": "orders.{{partition(3,1)}}.$1"
          weighted: [ {dest: w.a, weight: 30%}, {dest: w.b, weight: 20%}, {dest: w.c, weight: 10%, cluster: east} ]
          "alpha.>": "beta.>"
        }
        accounts {
          A: { users: [{user: a, password: a}], mappings: { x: y } }
          B: {}
        }
        """;

    private static void Configure(BrokerOptions options)
    {
        options.Mappings =
        [
            Mapping("orders.*", ("orders.{{partition(3,1)}}.$1", 100, null)),
            Mapping("weighted", ("w.a", 30, null), ("w.b", 20, null), ("w.c", 10, "east")),
            Mapping("alpha.>", ("beta.>", 100, null)),
        ];
        options.Accounts =
        [
            new AccountOptions { Name = "A", Users = [new UserOptions { User = "a", Password = "a" }], Mappings = [Mapping("x", ("y", 100, null))] },
            new AccountOptions { Name = "B" },
        ];
    }

    private static MappingOptions Mapping(string source, params (string Subject, int Weight, string? Cluster)[] destinations) => new()
    {
        Source = source,
        Destinations = [.. destinations.Select(d => new MappingDestinationOptions { Subject = d.Subject, Weight = d.Weight, Cluster = d.Cluster })],
    };

    [Theory(Timeout = 60_000)]
    [InlineData(ServerKind.Ours)]
    [InlineData(ServerKind.Reference)]
    public async Task Accountz_shows_each_accounts_mappings_as_nats_server_keeps_them(ServerKind kind)
    {
        await using var server = await AccountMonitoringTests.Monitored.StartAsync(kind, ReferenceConfig, Configure);

        var global = (await server.GetJsonAsync("/accountz?acc=%24G")).GetProperty("account_detail");
        var mappings = global.GetProperty("mappings");
        Assert.Equal(["alpha.>", "orders.*", "weighted"], mappings.EnumerateObject().Select(p => p.Name));
        Assert.Equal(["beta.>:100:"], Destinations(mappings, "alpha.>"));
        Assert.Equal(["orders.{{partition(3,1)}}.$1:100:"], Destinations(mappings, "orders.*"));
        Assert.Equal(["w.b:20:", "w.a:50:", "weighted:100:", "w.c:10:east", "weighted:100:east"], Destinations(mappings, "weighted"));

        // The key sits between subscriptions and sublist_stats, as nats-server's AccountInfo orders its fields.
        var keys = global.EnumerateObject().Select(p => p.Name).ToList();
        Assert.Equal(keys.IndexOf("subscriptions") + 1, keys.IndexOf("mappings"));

        var a = (await server.GetJsonAsync("/accountz?acc=A")).GetProperty("account_detail");
        Assert.Equal(["y:100:"], Destinations(a.GetProperty("mappings"), "x"));
        Assert.False((await server.GetJsonAsync("/accountz?acc=B")).GetProperty("account_detail").TryGetProperty("mappings", out _));
    }

    private static string[] Destinations(System.Text.Json.JsonElement mappings, string source) =>
        [.. mappings.GetProperty(source).EnumerateArray().Select(d =>
            $"{d.GetProperty("subject").GetString()}:{d.GetProperty("weight").GetInt32()}:{(d.TryGetProperty("cluster", out var c) ? c.GetString() : "")}")];
}
