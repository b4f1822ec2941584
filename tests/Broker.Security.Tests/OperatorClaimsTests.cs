using System.Text.Json;
using Broker.Core;
using Broker.Core.Auth;
using Broker.Core.Internal.Jwt;
using NATS.Client.Core;
using NATS.NKeys;
using static Broker.Security.Tests.OperatorModeTests;

namespace Broker.Security.Tests;

/// <summary>
/// What the JWTs give a client in operator mode, the same on our broker and nats-server 2.9.10: the user's and the
/// account's permissions, the account's and the user's limits, a scoped signing key's template, JetStream limits.
/// </summary>
public sealed class OperatorClaimsTests
{
    public static TheoryData<ServerKind> Servers => OperatorModeTests.Servers;

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
    public async Task A_user_within_its_src_and_connection_types_connects(ServerKind kind)
    {
        var op = new TestOperator();
        var account = op.CreateAccount();
        var (user, jwt) = TestOperator.CreateUser(account, c =>
        {
            c.Nats.Source = ["10.0.0.0/8", "127.0.0.0/8"];
            c.Nats.AllowedConnectionTypes = ["STANDARD", "WEBSOCKET"];
        });
        await using var server = await StartAsync(kind, op);
        await using var client = await server.ConnectAsync();

        await client.SendAsync(Connect(jwt, Sign(user, Nonce(client))) + "PING\r\n");

        Assert.Equal(["PONG"], (await client.CollectUntilAsync("PONG")).Lines);
    }
}
