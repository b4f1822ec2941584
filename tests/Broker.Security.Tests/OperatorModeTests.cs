using System.Buffers.Text;
using System.Text;
using System.Text.Json;
using Broker.Core;
using Broker.Core.Auth;
using Broker.Core.Internal.Jwt;
using NATS.Client.Core;
using NATS.NKeys;

namespace Broker.Security.Tests;

/// <summary>
/// Operator mode with the MEMORY resolver, the same on our broker and nats-server 2.9.10: creds files and JWT + seed
/// through NATS.Client.Core, and the refusals (every one <c>-ERR 'Authorization Violation'</c>) through raw sockets that
/// sign the INFO nonce themselves.
/// </summary>
public sealed class OperatorModeTests : IDisposable
{
    private static readonly KeyPair Scoped = KeyPair.CreatePair(PrefixByte.Account);

    private readonly string directory = Directory.CreateTempSubdirectory("broker-operator-").FullName;

    public static TheoryData<ServerKind> Servers => new() { ServerKind.Ours, ServerKind.Reference };

    public void Dispose() => Directory.Delete(directory, recursive: true);

    /// <summary>Both servers in operator mode with <paramref name="op"/>'s accounts preloaded.</summary>
    internal static Task<ServerUnderTest> StartAsync(ServerKind kind, TestOperator op, string extraConf = "", Action<BrokerOptions>? configure = null) =>
        ServerUnderTest.StartAsync(
            kind,
            o =>
            {
                o.Operator.Operators.Add(op.Jwt);
                o.Operator.Resolver = AccountResolverType.Memory;
                foreach (var (key, jwt) in op.AccountJwts)
                {
                    o.Operator.ResolverPreload[key] = jwt;
                }

                configure?.Invoke(o);
            },
            op.ConfigLines() + extraConf);

    [Theory]
    [MemberData(nameof(Servers))]
    public async Task A_creds_file_user_publishes_and_subscribes_in_its_account(ServerKind kind)
    {
        var op = new TestOperator();
        var account = op.CreateAccount();
        var other = op.CreateAccount();
        var (alice, aliceJwt) = TestOperator.CreateUser(account);
        var (bob, bobJwt) = TestOperator.CreateUser(account);
        var (carol, carolJwt) = TestOperator.CreateUser(other);
        await using var server = await StartAsync(kind, op);

        var creds = TestJwt.WriteCreds(directory, "alice", aliceJwt, alice);
        await using var subscriber = await NatsClients.ConnectAsync(server.Url, "alice", o => o with { AuthOpts = new NatsAuthOpts { CredsFile = creds } });
        await using var publisher = await NatsClients.ConnectAsync(server.Url, "bob", o => o with { AuthOpts = new NatsAuthOpts { Jwt = bobJwt, Seed = bob.GetSeed() } });
        await using var outsider = await NatsClients.ConnectAsync(server.Url, "carol", o => o with { AuthOpts = new NatsAuthOpts { Jwt = carolJwt, Seed = carol.GetSeed() } });
        await using var sub = await subscriber.SubscribeCoreAsync<string>("orders.>");
        await using var outsiderSub = await outsider.SubscribeCoreAsync<string>("orders.>");
        await subscriber.PingAsync();
        await outsider.PingAsync();

        await publisher.PublishAsync("orders.1", "one");

        Assert.Equal("one", (await sub.NextAsync()).Data);
        using var quiet = new CancellationTokenSource(TimeSpan.FromMilliseconds(300));
        await Assert.ThrowsAnyAsync<OperationCanceledException>(async () => await outsiderSub.Msgs.ReadAsync(quiet.Token));
    }

    [Theory]
    [MemberData(nameof(Servers))]
    public async Task Info_carries_a_nonce_and_requires_auth(ServerKind kind)
    {
        var op = new TestOperator();
        await using var server = await StartAsync(kind, op);
        await using var client = await server.ConnectAsync();

        using var info = JsonDocument.Parse(client.Info!["INFO ".Length..]);
        Assert.True(info.RootElement.GetProperty("auth_required").GetBoolean());
        Assert.Equal(15, info.RootElement.GetProperty("nonce").GetString()!.Length);
    }

    public static TheoryData<ServerKind, string> Refusals()
    {
        var data = new TheoryData<ServerKind, string>();
        foreach (var kind in new[] { ServerKind.Ours, ServerKind.Reference })
        {
            foreach (var refusal in new[]
            {
                "no-jwt", "no-signature", "wrong-signature", "expired-user", "not-yet-valid", "unknown-account", "untrusted-account",
                "expired-account", "revoked-user", "revoked-all", "unknown-signing-key", "bearer-disallowed", "src-refused",
                "forged-jwt", "websocket-only", "scoped-user-with-own-permissions", "outside-times",
            })
            {
                data.Add(kind, refusal);
            }
        }

        return data;
    }

    [Theory]
    [MemberData(nameof(Refusals))]
    public async Task Every_refusal_is_an_authorization_violation(ServerKind kind, string refusal)
    {
        var op = new TestOperator();
        var user = TestJwt.NewKey(PrefixByte.User);
        var account = TestJwt.NewKey(PrefixByte.Account);
        var now = DateTimeOffset.UtcNow;
        Action<AccountClaims>? accountClaims = refusal switch
        {
            "expired-account" => c => c.Expires = now.AddSeconds(-10).ToUnixTimeSeconds(),
            "revoked-user" => c => c.Nats.Revocations = new() { [user.GetPublicKey()] = now.AddSeconds(10).ToUnixTimeSeconds() },
            "revoked-all" => c => c.Nats.Revocations = new() { ["*"] = now.AddSeconds(10).ToUnixTimeSeconds() },
            "bearer-disallowed" => c => c.Nats.Limits.DisallowBearer = true,
            "scoped-user-with-own-permissions" => c => c.Nats.SigningKeys = new() { [Scoped.GetPublicKey()] = new UserScopeClaim { Key = Scoped.GetPublicKey(), Role = "r" } },
            _ => null,
        };
        if (refusal == "untrusted-account")
        {
            op.AddAccount(account, accountClaims, signer: TestJwt.NewKey(PrefixByte.Operator));
        }
        else if (refusal != "unknown-account")
        {
            op.AddAccount(account, accountClaims);
        }

        Action<UserClaims>? userClaims = refusal switch
        {
            "expired-user" => c => c.Expires = now.AddSeconds(-10).ToUnixTimeSeconds(),
            "not-yet-valid" => c => c.NotBefore = now.AddHours(1).ToUnixTimeSeconds(),
            "bearer-disallowed" => c => c.Nats.BearerToken = true,
            "src-refused" => c => c.Nats.Source = ["192.0.2.0/24"],
            "websocket-only" => c => c.Nats.AllowedConnectionTypes = ["WEBSOCKET"],
            "scoped-user-with-own-permissions" => c => c.Nats.Publish = new PermissionClaim { Allow = ["x"] },
            "outside-times" => c =>
            {
                // A window that starts one hour from now and lasts a minute, in UTC.
                var start = now.UtcDateTime.AddHours(1);
                c.Nats.Times = [new TimeRangeClaim { Start = start.ToString("HH:mm:ss", System.Globalization.CultureInfo.InvariantCulture), End = start.AddMinutes(1).ToString("HH:mm:ss", System.Globalization.CultureInfo.InvariantCulture) }];
                c.Nats.Locale = "UTC";
            },
            _ => null,
        };
        var signer = refusal switch
        {
            "unknown-signing-key" => TestJwt.NewKey(PrefixByte.Account),
            "scoped-user-with-own-permissions" => Scoped,
            _ => account,
        };
        var jwt = TestJwt.User(signer, user.GetPublicKey(), userClaims, issuerAccount: refusal is "unknown-signing-key" or "scoped-user-with-own-permissions" ? account.GetPublicKey() : null);
        if (refusal == "forged-jwt")
        {
            // The payload of one user's JWT under the signature of another's.
            var other = TestJwt.User(account, TestJwt.NewKey(PrefixByte.User).GetPublicKey());
            jwt = jwt[..jwt.LastIndexOf('.')] + other[other.LastIndexOf('.')..];
        }

        await using var server = await StartAsync(kind, op);
        await using var client = await server.ConnectAsync();
        var nonce = Nonce(client);
        var signature = refusal switch
        {
            "no-signature" => null,
            "wrong-signature" => Sign(TestJwt.NewKey(PrefixByte.User), nonce),
            _ => Sign(user, nonce),
        };

        await client.SendAsync(Connect(refusal == "no-jwt" ? null : jwt, signature) + "PING\r\n");

        Assert.Equal(["-ERR 'Authorization Violation'"], await client.ExpectClosedAsync());
    }

    [Theory]
    [MemberData(nameof(Servers))]
    public async Task A_bearer_token_needs_no_signature_when_the_account_allows_it(ServerKind kind)
    {
        var op = new TestOperator();
        var account = op.CreateAccount();
        var (_, jwt) = TestOperator.CreateUser(account, c => c.Nats.BearerToken = true);
        await using var server = await StartAsync(kind, op);
        await using var client = await server.ConnectAsync();

        await client.SendAsync(Connect(jwt, null) + "PING\r\n");

        Assert.Equal(["PONG"], (await client.CollectUntilAsync("PONG")).Lines);
    }

    [Theory]
    [MemberData(nameof(Servers))]
    public async Task A_user_signed_by_a_signing_key_of_its_account_connects(ServerKind kind)
    {
        var op = new TestOperator();
        var signingKey = TestJwt.NewKey(PrefixByte.Account);
        var account = op.CreateAccount(c => c.Nats.SigningKeys = new() { [signingKey.GetPublicKey()] = null });
        var (user, jwt) = TestOperator.CreateUser(account, signingKey: signingKey);
        await using var server = await StartAsync(kind, op);

        await using var nats = await NatsClients.ConnectAsync(server.Url, "signed", o => o with { AuthOpts = new NatsAuthOpts { Jwt = jwt, Seed = user.GetSeed() } });

        await nats.PingAsync();
    }

    [Theory]
    [MemberData(nameof(Servers))]
    public async Task A_scoped_signing_key_gives_its_users_the_template_filled_in(ServerKind kind)
    {
        var op = new TestOperator();
        var scoped = TestJwt.NewKey(PrefixByte.Account);
        var account = op.CreateAccount(c => c.Nats.SigningKeys = new()
        {
            [scoped.GetPublicKey()] = new UserScopeClaim
            {
                Key = scoped.GetPublicKey(),
                Role = "staff",
                Template = new UserPermissionLimitsClaim
                {
                    Publish = new PermissionClaim { Allow = ["users.{{name()}}.>", "dept.{{tag(dept)}}"] },
                    Subscribe = new PermissionClaim { Deny = ["secret.{{subject()}}"] },
                    Subscriptions = -1,
                    Data = -1,
                    Payload = -1,
                },
            },
        });
        var (user, jwt) = TestOperator.CreateUser(account, c =>
        {
            // A scoped user carries nothing of its own, limits included (0, as nats-io/jwt 2.3's HasEmptyPermissions).
            c.Name = "alice";
            c.Nats.Tags = ["dept:sales", "dept:ops"];
            (c.Nats.Subscriptions, c.Nats.Data, c.Nats.Payload) = (0, 0, 0);
        }, signingKey: scoped);
        await using var server = await StartAsync(kind, op);
        await using var client = await server.ConnectAsync();

        await client.SendAsync(Connect(jwt, Sign(user, Nonce(client)))
            + "PUB users.alice.x 0\r\n\r\nPUB users.bob.x 0\r\n\r\nPUB dept.sales 0\r\n\r\nPUB dept.ops 0\r\n\r\nPUB dept.hr 0\r\n\r\n"
            + $"SUB secret.{user.GetPublicKey()} 1\r\nSUB secret.other 2\r\nPING\r\n");

        Assert.Equal(
            [
                "-ERR 'Permissions Violation for Publish to \"users.bob.x\"'",
                "-ERR 'Permissions Violation for Publish to \"dept.hr\"'",
                $"-ERR 'Permissions Violation for Subscription to \"secret.{user.GetPublicKey()}\"'",
                "PONG",
            ],
            (await client.CollectUntilAsync("PONG")).Lines);
    }

    [Theory]
    [MemberData(nameof(Servers))]
    public async Task Permissions_of_the_user_jwt_apply(ServerKind kind)
    {
        var op = new TestOperator();
        var account = op.CreateAccount();
        var (user, jwt) = TestOperator.CreateUser(account, c =>
        {
            c.Nats.Publish = new PermissionClaim { Allow = ["allowed.>"] };
            c.Nats.Subscribe = new PermissionClaim { Deny = ["secret.>"] };
        });
        await using var server = await StartAsync(kind, op);
        await using var client = await server.ConnectAsync();

        await client.SendAsync(Connect(jwt, Sign(user, Nonce(client))) + "PUB denied.x 0\r\n\r\nSUB secret.x 1\r\nPUB allowed.x 0\r\n\r\nPING\r\n");

        Assert.Equal(
            ["-ERR 'Permissions Violation for Publish to \"denied.x\"'", "-ERR 'Permissions Violation for Subscription to \"secret.x\"'", "PONG"],
            (await client.CollectUntilAsync("PONG")).Lines);
    }

    [Theory]
    [MemberData(nameof(Servers))]
    public async Task Default_permissions_of_the_account_apply_to_users_without_their_own(ServerKind kind)
    {
        var op = new TestOperator();
        var account = op.CreateAccount(c => c.Nats.DefaultPermissions = new PermissionsClaim { Publish = new PermissionClaim { Deny = ["nope.>"] } });
        var (user, jwt) = TestOperator.CreateUser(account);
        await using var server = await StartAsync(kind, op);
        await using var client = await server.ConnectAsync();

        await client.SendAsync(Connect(jwt, Sign(user, Nonce(client))) + "PUB nope.x 0\r\n\r\nPING\r\n");

        Assert.Equal(["-ERR 'Permissions Violation for Publish to \"nope.x\"'", "PONG"], (await client.CollectUntilAsync("PONG")).Lines);
    }

    [Theory]
    [MemberData(nameof(Servers))]
    public async Task The_account_connection_limit_of_the_jwt_applies(ServerKind kind)
    {
        var op = new TestOperator();
        var account = op.CreateAccount(c => c.Nats.Limits.Connections = 1);
        var (user, jwt) = TestOperator.CreateUser(account);
        await using var server = await StartAsync(kind, op);
        await using var first = await server.ConnectAsync();
        await first.SendAsync(Connect(jwt, Sign(user, Nonce(first))) + "PING\r\n");
        Assert.Equal(["PONG"], (await first.CollectUntilAsync("PONG")).Lines);

        await using var second = await server.ConnectAsync();
        await second.SendAsync(Connect(jwt, Sign(user, Nonce(second))) + "PING\r\n");

        Assert.Equal(["-ERR 'maximum account active connections exceeded'"], await second.ExpectClosedAsync());
    }

    [Theory]
    [MemberData(nameof(Servers))]
    public async Task The_subscription_limit_of_the_user_jwt_applies(ServerKind kind)
    {
        var op = new TestOperator();
        var account = op.CreateAccount();
        var (user, jwt) = TestOperator.CreateUser(account, c => c.Nats.Subscriptions = 1);
        await using var server = await StartAsync(kind, op);
        await using var client = await server.ConnectAsync();

        await client.SendAsync(Connect(jwt, Sign(user, Nonce(client))) + "SUB a 1\r\nSUB b 2\r\nPING\r\n");

        Assert.Equal(["-ERR 'maximum subscriptions exceeded'", "PONG"], (await client.CollectUntilAsync("PONG")).Lines);
    }

    [Theory]
    [MemberData(nameof(Servers))]
    public async Task The_payload_limit_of_the_user_jwt_applies(ServerKind kind)
    {
        var op = new TestOperator();
        var account = op.CreateAccount();
        var (user, jwt) = TestOperator.CreateUser(account, c => c.Nats.Payload = 4);
        await using var server = await StartAsync(kind, op);
        await using var client = await server.ConnectAsync();

        await client.SendAsync(Connect(jwt, Sign(user, Nonce(client))) + "PUB a 4\r\nabcd\r\nPUB a 5\r\nabcde\r\n");

        Assert.Equal(["-ERR 'Maximum Payload Violation'"], await client.ExpectClosedAsync());
    }

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

    [Theory]
    [MemberData(nameof(Servers))]
    public async Task JetStream_limits_of_the_account_jwt_apply(ServerKind kind)
    {
        var op = new TestOperator();
        var account = op.CreateAccount(c =>
        {
            c.Nats.Limits.MemoryStorage = -1;
            c.Nats.Limits.DiskStorage = -1;
            c.Nats.Limits.Streams = 1;
            c.Nats.Limits.Consumers = -1;
        });
        var noJetStream = op.CreateAccount();
        var (user, jwt) = TestOperator.CreateUser(account);
        var (other, otherJwt) = TestOperator.CreateUser(noJetStream);
        await using var server = await JetStreamSecurityServer.StartAsync(
            kind,
            o =>
            {
                o.Operator.Operators.Add(op.Jwt);
                o.Operator.Resolver = AccountResolverType.Memory;
                foreach (var (key, value) in op.AccountJwts)
                {
                    o.Operator.ResolverPreload[key] = value;
                }
            },
            op.ConfigLines());
        await using var nats = await NatsClients.ConnectAsync(server.Url, "js", o => o with { AuthOpts = new NatsAuthOpts { Jwt = jwt, Seed = user.GetSeed() } });
        await using var outsider = await NatsClients.ConnectAsync(server.Url, "nojs", o => o with { AuthOpts = new NatsAuthOpts { Jwt = otherJwt, Seed = other.GetSeed() } });
        var js = new NATS.Client.JetStream.NatsJSContext(nats);

        await js.CreateStreamAsync(new NATS.Client.JetStream.Models.StreamConfig("S1", ["s1.>"]));
        var second = await Assert.ThrowsAsync<NATS.Client.JetStream.NatsJSApiException>(async () => await js.CreateStreamAsync(new NATS.Client.JetStream.Models.StreamConfig("S2", ["s2.>"])));
        Assert.Equal(10027, second.Error.ErrCode);

        var info = await new NATS.Client.JetStream.NatsJSContext(outsider).Connection.RequestAsync<string, string>("$JS.API.INFO", "");
        Assert.Contains("\"err_code\":10039", info.Data, StringComparison.Ordinal);
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

    internal static string Nonce(RawClient client)
    {
        using var info = JsonDocument.Parse(client.Info!["INFO ".Length..]);
        return info.RootElement.GetProperty("nonce").GetString()!;
    }

    internal static string Sign(KeyPair key, string nonce)
    {
        var signature = new byte[64];
        key.Sign(Encoding.ASCII.GetBytes(nonce), signature);
        return Base64Url.EncodeToString(signature);
    }

    internal static string Connect(string? jwt, string? signature)
    {
        var fields = new List<string> { "\"verbose\":false", "\"protocol\":1" };
        if (jwt is not null)
        {
            fields.Add($"\"jwt\":\"{jwt}\"");
        }

        if (signature is not null)
        {
            fields.Add($"\"sig\":\"{signature}\"");
        }

        return "CONNECT {" + string.Join(',', fields) + "}\r\n";
    }
}
