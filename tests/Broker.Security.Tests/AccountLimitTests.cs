using System.Net;
using System.Text.Json;
using Broker.Core;
using Broker.Core.Auth;

namespace Broker.Security.Tests;

/// <summary>
/// An account's <c>limits { max_connections, max_subscriptions, max_payload }</c> as raw-socket transcripts, the same on
/// our broker and nats-server 2.9.10 (same accounts on both), with the close reason /connz reports.
/// </summary>
public sealed class AccountLimitTests
{
    public static TheoryData<ServerKind> Servers => new() { ServerKind.Ours, ServerKind.Reference };

    private static string Connect(string user, int protocol = 1) =>
        $"CONNECT {{\"user\":\"{user}\",\"pass\":\"{user}\",\"verbose\":false,\"protocol\":{protocol}}}\r\n";

    /// <summary>Accounts A (users a, a2; <paramref name="limits"/>) and B (user b) on both servers, monitoring on.</summary>
    private static async Task<(ServerUnderTest Server, int HttpPort)> StartAsync(ServerKind kind, AccountLimitOptions limits, string limitsConf, Action<BrokerOptions>? server = null, string serverConf = "")
    {
        var httpPort = Ports.GetFreePort();
        var conf = $$"""
            http: "127.0.0.1:{{httpPort}}"
            {{serverConf}}
            accounts {
              A: { users: [{user: a, password: a}, {user: a2, password: a2}], limits { {{limitsConf}} } }
              B: { users: [{user: b, password: b}] }
            }
            """;
        var started = await ServerUnderTest.StartAsync(
            kind,
            o =>
            {
                o.Monitoring.Host = "127.0.0.1";
                o.Monitoring.Port = 0;
                o.Accounts.Add(new AccountOptions { Name = "A", Users = [AccountIsolationTests.User("a"), AccountIsolationTests.User("a2")], Limits = limits });
                o.Accounts.Add(new AccountOptions { Name = "B", Users = [AccountIsolationTests.User("b")] });
                server?.Invoke(o);
            },
            conf);
        if (started.Ours is { } ours)
        {
            httpPort = ((IPEndPoint)ours.Server.GetEndPoint(BrokerServer.MonitorListenerName)).Port;
        }

        return (started, httpPort);
    }

    /// <summary>
    /// The close reason /connz reports for the connection from <paramref name="client"/>'s port (the account it shows
    /// is the monitoring's part, tested there).
    /// </summary>
    private static Task<string> ClosedAsync(int httpPort, RawClient client) => ClosedAsync(httpPort, client.LocalPort);

    private static async Task<string> ClosedAsync(int httpPort, int port)
    {
        using var http = new HttpClient { BaseAddress = new Uri($"http://127.0.0.1:{httpPort}"), Timeout = TimeSpan.FromSeconds(10) };
        string? found = null;
        await Eventually.AssertAsync(
            async () =>
            {
                using var connz = JsonDocument.Parse(await http.GetStringAsync("/connz?state=closed&auth=1"));
                foreach (var connection in connz.RootElement.GetProperty("connections").EnumerateArray())
                {
                    if (connection.GetProperty("port").GetInt32() == port)
                    {
                        found = connection.GetProperty("reason").GetString();
                        return true;
                    }
                }

                return false;
            },
            "the closed connection in /connz");
        return found!;
    }

    [Theory(Timeout = 30_000)]
    [MemberData(nameof(Servers))]
    public async Task Max_connections_refuses_the_account_connection_beyond_it(ServerKind kind)
    {
        var (server, httpPort) = await StartAsync(kind, new AccountLimitOptions { MaxConnections = 1 }, "max_connections: 1");
        await using var _ = server;
        await using var first = await server.ConnectAsync();
        await first.SendAsync(Connect("a"));
        Assert.Equal(["PONG"], (await first.PingAndCollectAsync()).Lines);

        // The second connection of A authenticates, then its account is full.
        await using var second = await server.ConnectAsync();
        await second.SendAsync(Connect("a2") + "PING\r\n");
        Assert.Equal(["-ERR 'maximum account active connections exceeded'"], await second.ExpectClosedAsync());
        Assert.Equal("Maximum Account Connections Exceeded", await ClosedAsync(httpPort, second));

        // Another account is not counted against A.
        await using var other = await server.ConnectAsync();
        await other.SendAsync(Connect("b"));
        Assert.Equal(["PONG"], (await other.PingAndCollectAsync()).Lines);

        // The place comes back when the first leaves.
        var firstPort = first.LocalPort;
        await first.DisposeAsync();
        await ClosedAsync(httpPort, firstPort);
        await using var third = await server.ConnectAsync();
        await third.SendAsync(Connect("a2"));
        Assert.Equal(["PONG"], (await third.PingAndCollectAsync()).Lines);
    }

    [Theory(Timeout = 30_000)]
    [MemberData(nameof(Servers))]
    public async Task Max_subscriptions_refuses_the_subscription_beyond_it_and_keeps_the_connection(ServerKind kind)
    {
        var (server, _) = await StartAsync(kind, new AccountLimitOptions { MaxSubscriptions = 2 }, "max_subscriptions: 2");
        await using var __ = server;
        await using var client = await server.ConnectAsync();
        await client.SendAsync(Connect("a") + "SUB s.1 1\r\nSUB s.2 2\r\nSUB s.3 3\r\n");
        Assert.Equal(["-ERR 'maximum subscriptions exceeded'", "PONG"], (await client.PingAndCollectAsync()).Lines);

        // Still connected, with its two subscriptions; B has no such limit.
        await client.SendAsync("PUB s.2 1\r\nx\r\nPUB s.3 1\r\ny\r\n");
        Assert.Equal(["MSG s.2 2 1", "x", "PONG"], (await client.PingAndCollectAsync()).Lines);
        await using var other = await server.ConnectAsync();
        await other.SendAsync(Connect("b") + "SUB s.1 1\r\nSUB s.2 2\r\nSUB s.3 3\r\n");
        Assert.Equal(["PONG"], (await other.PingAndCollectAsync()).Lines);
    }

    [Theory(Timeout = 30_000)]
    [MemberData(nameof(Servers))]
    public async Task Max_payload_of_the_account_is_announced_after_the_first_pong_and_enforced(ServerKind kind)
    {
        var (server, httpPort) = await StartAsync(kind, new AccountLimitOptions { MaxPayload = 100 }, "max_payload: 100");
        await using var __ = server;
        await using var client = await server.ConnectAsync();
        Assert.Contains("\"max_payload\":1048576", client.Info, StringComparison.Ordinal);

        // After CONNECT with protocol 1, the first PONG is followed by an INFO with the account's limit.
        await client.SendAsync(Connect("a") + "PING\r\n");
        Assert.Equal("PONG", await client.ReadLineAsync());
        var info = await client.ReadLineAsync();
        Assert.StartsWith("INFO {", info, StringComparison.Ordinal);
        Assert.Contains("\"max_payload\":100,", info, StringComparison.Ordinal);
        Assert.DoesNotContain("nonce", info, StringComparison.Ordinal);

        // Only once: the next PONG comes alone.
        await client.SendAsync("PUB x 100\r\n" + new string('x', 100) + "\r\n");
        Assert.Equal(["PONG"], (await client.PingAndCollectAsync()).Lines);
        await client.SendAsync("PUB x 101\r\n" + new string('x', 101) + "\r\n");
        Assert.Equal(["-ERR 'Maximum Payload Violation'"], await client.ExpectClosedAsync());
        Assert.Equal("Maximum Message Payload Exceeded", await ClosedAsync(httpPort, client));
    }

    [Theory(Timeout = 30_000)]
    [MemberData(nameof(Servers))]
    public async Task Max_payload_of_the_account_applies_to_a_publish_in_the_same_write_as_connect(ServerKind kind)
    {
        var (server, _) = await StartAsync(kind, new AccountLimitOptions { MaxPayload = 100 }, "max_payload: 100");
        await using var __ = server;
        await using var client = await server.ConnectAsync();
        // The CONNECT and a 101-byte publish in one write: the publish already meets the account's limit.
        await client.SendAsync(Connect("a", protocol: 0) + "PUB x 101\r\n" + new string('x', 101) + "\r\n");
        Assert.Equal(["-ERR 'Maximum Payload Violation'"], await client.ExpectClosedAsync());
    }

    [Theory(Timeout = 30_000)]
    [MemberData(nameof(Servers))]
    public async Task Server_max_payload_lower_than_the_accounts_wins_without_a_second_info(ServerKind kind)
    {
        var (server, _) = await StartAsync(kind, new AccountLimitOptions { MaxPayload = 1000 }, "max_payload: 1000", o => o.MaxPayload = 50, "max_payload: 50");
        await using var __ = server;
        await using var client = await server.ConnectAsync();
        Assert.Contains("\"max_payload\":50,", client.Info, StringComparison.Ordinal);
        await client.SendAsync(Connect("a") + "PUB x 50\r\n" + new string('x', 50) + "\r\n");
        Assert.Equal(["PONG"], (await client.PingAndCollectAsync()).Lines);
        await client.SendAsync("PUB x 51\r\n" + new string('x', 51) + "\r\n");
        Assert.Equal(["-ERR 'Maximum Payload Violation'"], await client.ExpectClosedAsync());
    }
}
