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
