using System.Text.Json;
using Broker.Core.Auth;
using Broker.TestKit;
using NATS.Client.Core;
using Monitored = Broker.Monitoring.Tests.AccountMonitoringTests.Monitored;

namespace Broker.Monitoring.Tests;

/// <summary>
/// The system imports every account has (nats-server <c>registerSystemImports</c>), the same on our broker and
/// nats-server 2.9.10: a user of A asking the server for its connections or statistics on <c>$SYS.REQ.SERVER.PING.CONNZ</c>,
/// <c>$SYS.REQ.ACCOUNT.PING.CONNZ</c> or <c>.STATZ</c> gets A's only, through the import to
/// <c>$SYS.REQ.ACCOUNT.A.*</c> in the system account.
/// </summary>
public sealed class SystemImportTests
{
    private const string Config = """
        accounts {
          A: { users: [{user: a, password: a}, {user: a2, password: a2}] }
          B: { users: [{user: b, password: b}] }
        }
        """;

    private static void Configure(Broker.Core.BrokerOptions options) => options.Accounts =
    [
        new AccountOptions { Name = "A", Users = [new UserOptions { User = "a", Password = "a" }, new UserOptions { User = "a2", Password = "a2" }] },
        new AccountOptions { Name = "B", Users = [new UserOptions { User = "b", Password = "b" }] },
    ];

    private static Task<NatsConnection> ConnectAsync(Monitored server, string user) =>
        NatsClients.ConnectAsync(server.Url, user, o => o with { AuthOpts = new NatsAuthOpts { Username = user, Password = user } });

    private static async Task<JsonElement> RequestAsync(NatsConnection connection, string subject)
    {
        var reply = await connection.RequestAsync<string, string>(subject, string.Empty, replyOpts: new NatsSubOpts { Timeout = NatsClients.Timeout });
        using var document = JsonDocument.Parse(reply.Data!);
        return document.RootElement.GetProperty("data").Clone();
    }

    [Theory(Timeout = 60_000)]
    [InlineData(ServerKind.Ours)]
    [InlineData(ServerKind.Reference)]
    public async Task A_user_asking_for_connections_and_statistics_gets_its_accounts_only(ServerKind kind)
    {
        await using var server = await Monitored.StartAsync(kind, Config, Configure);
        await using var a = await ConnectAsync(server, "a");
        await using var a2 = await ConnectAsync(server, "a2");
        await using var b = await ConnectAsync(server, "b");
        await a2.PingAsync();
        await b.PingAsync();

        foreach (var subject in new[] { "$SYS.REQ.SERVER.PING.CONNZ", "$SYS.REQ.ACCOUNT.PING.CONNZ" })
        {
            var connz = await RequestAsync(a, subject);
            Assert.Equal(2, connz.GetProperty("num_connections").GetInt32());
            Assert.Equal(["a", "a2"], connz.GetProperty("connections").EnumerateArray().Select(c => c.GetProperty("name").GetString()).Order(StringComparer.Ordinal));

            var other = await RequestAsync(b, subject);
            Assert.Equal("b", Assert.Single(other.GetProperty("connections").EnumerateArray()).GetProperty("name").GetString());
        }

        var statz = await RequestAsync(a, "$SYS.REQ.ACCOUNT.PING.STATZ");
        var stat = Assert.Single(statz.GetProperty("account_statz").EnumerateArray());
        Assert.Equal("A", stat.GetProperty("acc").GetString());
        Assert.Equal(2, stat.GetProperty("conns").GetInt32());
    }
}
