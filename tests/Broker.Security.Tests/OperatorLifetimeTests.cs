using System.Text.Json;
using Broker.Core;
using Broker.Core.Auth;
using Broker.Core.Internal.Jwt;
using NATS.Client.Core;
using NATS.NKeys;
using static Broker.Security.Tests.OperatorModeTests;

namespace Broker.Security.Tests;

/// <summary>
/// A JWT client's life in operator mode, the same on our broker and nats-server 2.9.10 unless said: expiry of the user
/// JWT, of its times window and of the account JWT on live connections, monitoring, the operator's system account,
/// and (ours only) a reload.
/// </summary>
public sealed class OperatorLifetimeTests
{
    public static TheoryData<ServerKind> Servers => OperatorModeTests.Servers;

    [Theory]
    [MemberData(nameof(Servers))]
    public async Task A_live_client_is_closed_when_its_user_jwt_expires(ServerKind kind)
    {
        var op = new TestOperator();
        var account = op.CreateAccount();
        var (user, jwt) = TestOperator.CreateUser(account, c => c.Expires = DateTimeOffset.UtcNow.AddSeconds(2).ToUnixTimeSeconds());
        await using var server = await StartAsync(kind, op);
        await using var client = await server.ConnectAsync();
        await client.SendAsync(Connect(jwt, Sign(user, Nonce(client))) + "PING\r\n");
        Assert.Equal(["PONG"], (await client.CollectUntilAsync("PONG")).Lines);

        // The server's first PING (its round-trip measurement) may come before.
        Assert.Equal(["-ERR 'User Authentication Expired'"], (await client.ExpectClosedAsync(TimeSpan.FromSeconds(6))).Where(l => l != "PING"));
    }

    [Theory]
    [MemberData(nameof(Servers))]
    public async Task A_live_client_is_closed_at_the_end_of_its_times_window(ServerKind kind)
    {
        // A window (UTC) from at most a minute ago, not before midnight, to three seconds from now.
        var now = DateTime.UtcNow;
        if (now.TimeOfDay > TimeSpan.FromHours(24) - TimeSpan.FromSeconds(10))
        {
            await Task.Delay(TimeSpan.FromSeconds(11));
            now = DateTime.UtcNow;
        }

        var start = now - TimeSpan.FromSeconds(Math.Min(60, now.TimeOfDay.TotalSeconds));
        var op = new TestOperator();
        var account = op.CreateAccount();
        var (user, jwt) = TestOperator.CreateUser(account, c =>
        {
            c.Nats.Times = [new TimeRangeClaim { Start = start.ToString("HH:mm:ss", System.Globalization.CultureInfo.InvariantCulture), End = now.AddSeconds(3).ToString("HH:mm:ss", System.Globalization.CultureInfo.InvariantCulture) }];
            c.Nats.Locale = "UTC";
        });
        await using var server = await StartAsync(kind, op);
        await using var client = await server.ConnectAsync();
        await client.SendAsync(Connect(jwt, Sign(user, Nonce(client))) + "PING\r\n");
        Assert.Equal(["PONG"], (await client.CollectUntilAsync("PONG")).Lines);

        // The server's first PING (its round-trip measurement) may come before.
        Assert.Equal(["-ERR 'User Authentication Expired'"], (await client.ExpectClosedAsync(TimeSpan.FromSeconds(8))).Where(l => l != "PING"));
    }

    [Theory]
    [MemberData(nameof(Servers))]
    public async Task A_live_client_is_closed_when_its_account_jwt_expires(ServerKind kind)
    {
        var op = new TestOperator();
        var account = op.CreateAccount(c => c.Expires = DateTimeOffset.UtcNow.AddSeconds(2).ToUnixTimeSeconds());
        var (user, jwt) = TestOperator.CreateUser(account);
        await using var server = await StartAsync(kind, op);
        await using var client = await server.ConnectAsync();
        await client.SendAsync(Connect(jwt, Sign(user, Nonce(client))) + "PING\r\n");
        Assert.Equal(["PONG"], (await client.CollectUntilAsync("PONG")).Lines);

        // The server's first PING (its round-trip measurement) may come before.
        Assert.Equal(["-ERR 'Account Authentication Expired'"], (await client.ExpectClosedAsync(TimeSpan.FromSeconds(6))).Where(l => l != "PING"));
    }

    [Theory]
    [MemberData(nameof(Servers))]
    public async Task Connz_and_accountz_show_the_jwts(ServerKind kind)
    {
        var op = new TestOperator();
        var account = op.CreateAccount(c =>
        {
            c.Name = "tenant";
            c.Nats.Revocations = new() { ["UREVOKED"] = 1_700_000_000 };
        });
        var (user, jwt) = TestOperator.CreateUser(account, c => c.Name = "alice");
        var httpPort = Ports.GetFreePort();
        await using var server = await StartAsync(kind, op, $"http: \"127.0.0.1:{httpPort}\"\n", o =>
        {
            o.Monitoring.Host = "127.0.0.1";
            o.Monitoring.Port = 0;
        });
        if (server.Ours is { } ours)
        {
            httpPort = ((System.Net.IPEndPoint)ours.Server.GetEndPoint(BrokerServer.MonitorListenerName)).Port;
        }

        await using var nats = await NatsClients.ConnectAsync(server.Url, "alice", o => o with { AuthOpts = new NatsAuthOpts { Jwt = jwt, Seed = user.GetSeed() } });
        await nats.PingAsync();
        using var http = new HttpClient { BaseAddress = new Uri($"http://127.0.0.1:{httpPort}"), Timeout = TimeSpan.FromSeconds(10) };

        using var connz = JsonDocument.Parse(await http.GetStringAsync("/connz?auth=true"));
        var connection = Assert.Single(connz.RootElement.GetProperty("connections").EnumerateArray());
        Assert.Equal(user.GetPublicKey(), connection.GetProperty("authorized_user").GetString());
        Assert.Equal(account.GetPublicKey(), connection.GetProperty("account").GetString());
        Assert.Equal(jwt, connection.GetProperty("jwt").GetString());
        Assert.Equal(account.GetPublicKey(), connection.GetProperty("issuer_key").GetString());
        Assert.Equal("alice", connection.GetProperty("name_tag").GetString());
        using var plain = JsonDocument.Parse(await http.GetStringAsync("/connz"));
        Assert.False(plain.RootElement.GetProperty("connections")[0].TryGetProperty("jwt", out _));

        using var accountz = JsonDocument.Parse(await http.GetStringAsync($"/accountz?acc={account.GetPublicKey()}"));
        var detail = accountz.RootElement.GetProperty("account_detail");
        Assert.Equal(op.AccountJwts[account.GetPublicKey()], detail.GetProperty("jwt").GetString());
        Assert.Equal(op.PublicKey, detail.GetProperty("issuer_key").GetString());
        Assert.Equal("tenant", detail.GetProperty("name_tag").GetString());
        Assert.Equal(account.GetPublicKey(), detail.GetProperty("decoded_jwt").GetProperty("sub").GetString());
        Assert.Equal(-1, detail.GetProperty("decoded_jwt").GetProperty("nats").GetProperty("limits").GetProperty("conn").GetInt32());
        Assert.Equal("2023-11-14T22:13:20Z", detail.GetProperty("revoked_user").GetProperty("UREVOKED").GetString());
        Assert.False(detail.GetProperty("expired").GetBoolean());
        Assert.Equal(1, detail.GetProperty("client_connections").GetInt32());
        Assert.Contains(account.GetPublicKey(), accountz.RootElement.EnumerateObject().Select(_ => "").Concat(
            JsonDocument.Parse(await http.GetStringAsync("/accountz")).RootElement.GetProperty("accounts").EnumerateArray().Select(a => a.GetString()!)));
    }

    [Theory]
    [MemberData(nameof(Servers))]
    public async Task The_operators_system_account_answers_its_users_requests(ServerKind kind)
    {
        var op = new TestOperator();
        var account = op.CreateAccount();
        var (system, systemJwt) = TestOperator.CreateUser(op.SystemAccount);
        var (user, jwt) = TestOperator.CreateUser(account);
        await using var server = await StartAsync(kind, op);
        await using var admin = await NatsClients.ConnectAsync(server.Url, "sys", o => o with { AuthOpts = new NatsAuthOpts { Jwt = systemJwt, Seed = system.GetSeed() } });
        await using var tenant = await NatsClients.ConnectAsync(server.Url, "tenant", o => o with { AuthOpts = new NatsAuthOpts { Jwt = jwt, Seed = user.GetSeed() } });

        var reply = await admin.RequestAsync<string, string>("$SYS.REQ.SERVER.PING.CONNZ", "", replyOpts: new NatsSubOpts { Timeout = TimeSpan.FromSeconds(5) });

        using var connz = JsonDocument.Parse(reply.Data!);
        Assert.Equal(2, connz.RootElement.GetProperty("data").GetProperty("num_connections").GetInt32());
        await using var events = await admin.SubscribeCoreAsync<string>($"$SYS.ACCOUNT.{account.GetPublicKey()}.DISCONNECT");
        await admin.PingAsync();
        await tenant.DisposeAsync();
        using var disconnect = JsonDocument.Parse((await events.NextAsync()).Data!);
        Assert.Equal(account.GetPublicKey(), disconnect.RootElement.GetProperty("client").GetProperty("acc").GetString());
    }

    /// <summary>Ours only: a reload of other settings keeps JWT clients, authenticated again with their JWT and signature.</summary>
    [Fact(Timeout = 30_000)]
    public async Task A_reload_keeps_jwt_clients()
    {
        var op = new TestOperator();
        var account = op.CreateAccount();
        var (user, jwt) = TestOperator.CreateUser(account);
        BrokerOptions Options(int maxSubscriptions)
        {
            var options = new BrokerOptions { Host = "127.0.0.1", Port = 0, MaxSubscriptions = maxSubscriptions };
            options.Operator.Operators.Add(op.Jwt);
            options.Operator.Resolver = AccountResolverType.Memory;
            foreach (var (key, value) in op.AccountJwts)
            {
                options.Operator.ResolverPreload[key] = value;
            }

            return options;
        }

        await using var broker = await TestBroker.StartAsync(o =>
        {
            var configured = Options(0);
            o.Operator = configured.Operator;
        });
        await using var client = await RawClient.ConnectAsync(broker.EndPoint);
        await client.SendAsync(Connect(jwt, Sign(user, Nonce(client))) + "SUB a 1\r\n");
        Assert.Equal(["PONG"], (await client.PingAndCollectAsync()).Lines);

        Assert.True((await broker.Server.ReloadAsync(Options(10))).Succeeded);

        await client.SendAsync("PUB a 2\r\nhi\r\n");
        Assert.Equal(["MSG a 1 2", "hi", "PONG"], (await client.PingAndCollectAsync()).Lines);
    }
}
