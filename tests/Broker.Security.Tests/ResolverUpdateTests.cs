using System.Text.Json;
using Broker.Core.Internal.Jwt;
using NATS.Client.Core;
using NATS.NKeys;
using static Broker.Security.Tests.OperatorModeTests;
using static Broker.Security.Tests.ResolverTests;

namespace Broker.Security.Tests;

/// <summary>
/// Claims updates applied to live connections, deletes, and the MEMORY and cache resolvers' answers, the same on our
/// broker and nats-server 2.9.10.
/// </summary>
public sealed class ResolverUpdateTests : IDisposable
{
    private readonly string directory = Directory.CreateTempSubdirectory("broker-resolver-").FullName;

    public static TheoryData<ServerKind> Servers => new() { ServerKind.Ours, ServerKind.Reference };

    public void Dispose() => Directory.Delete(directory, recursive: true);

    private string Dir(ServerKind kind) => Path.Combine(directory, kind.ToString());

    private static async Task<RawClient> ConnectUserAsync(ServerUnderTest server, KeyPair user, string jwt)
    {
        var client = await server.ConnectAsync();
        await client.SendAsync(Connect(jwt, Sign(user, Nonce(client))) + "PING\r\n");
        Assert.Equal(["PONG"], (await client.CollectUntilAsync("PONG")).Lines);
        return client;
    }

    [Theory]
    [MemberData(nameof(Servers))]
    public async Task A_lower_connection_limit_closes_the_oldest_connections(ServerKind kind)
    {
        var op = new TestOperator();
        var account = op.CreateAccount();
        var (user, jwt) = TestOperator.CreateUser(account);
        await using var server = await StartResolverAsync(kind, op, Dir(kind));
        await using var sys = await ConnectSystemAsync(server, op);
        await RequestAsync(sys, "$SYS.REQ.CLAIMS.UPDATE", op.AccountJwts[account.GetPublicKey()]);
        await using var first = await ConnectUserAsync(server, user, jwt);
        await Task.Delay(20);
        await using var second = await ConnectUserAsync(server, user, jwt);
        await Task.Delay(20);
        await using var third = await ConnectUserAsync(server, user, jwt);

        var update = op.AddAccount(account, c => c.Nats.Limits.Connections = 1);
        Assert.Equal((200, account.GetPublicKey(), "jwt updated"), Answer(await RequestAsync(sys, "$SYS.REQ.CLAIMS.UPDATE", update)));

        // nats-server sorts the account's clients newest first and closes those past the limit.
        Assert.Equal(["-ERR 'maximum account active connections exceeded'"], await first.ExpectClosedAsync());
        Assert.Equal(["-ERR 'maximum account active connections exceeded'"], await second.ExpectClosedAsync());
        await third.SendAsync("PING\r\n");
        Assert.Equal(["PONG"], (await third.CollectUntilAsync("PONG")).Lines);
    }

    [Theory]
    [MemberData(nameof(Servers))]
    public async Task A_revoked_user_is_closed_and_others_stay(ServerKind kind)
    {
        var op = new TestOperator();
        var account = op.CreateAccount();
        var (revoked, revokedJwt) = TestOperator.CreateUser(account);
        var (kept, keptJwt) = TestOperator.CreateUser(account);
        await using var server = await StartResolverAsync(kind, op, Dir(kind));
        await using var sys = await ConnectSystemAsync(server, op);
        await RequestAsync(sys, "$SYS.REQ.CLAIMS.UPDATE", op.AccountJwts[account.GetPublicKey()]);
        await using var revokedClient = await ConnectUserAsync(server, revoked, revokedJwt);
        await using var keptClient = await ConnectUserAsync(server, kept, keptJwt);

        var update = op.AddAccount(account, c => c.Nats.Revocations = new() { [revoked.GetPublicKey()] = DateTimeOffset.UtcNow.AddSeconds(5).ToUnixTimeSeconds() });
        await RequestAsync(sys, "$SYS.REQ.CLAIMS.UPDATE", update);

        Assert.Equal(["-ERR 'User Authentication Revoked'"], await revokedClient.ExpectClosedAsync());
        await keptClient.SendAsync("PING\r\n");
        Assert.Equal(["PONG"], (await keptClient.CollectUntilAsync("PONG")).Lines);
        await using var again = await server.ConnectAsync();
        await again.SendAsync(Connect(revokedJwt, Sign(revoked, Nonce(again))) + "PING\r\n");
        Assert.Equal(["-ERR 'Authorization Violation'"], await again.ExpectClosedAsync());
    }

    [Theory]
    [MemberData(nameof(Servers))]
    public async Task New_payload_and_subscription_limits_apply_to_live_clients(ServerKind kind)
    {
        var op = new TestOperator();
        var account = op.CreateAccount();
        var (user, jwt) = TestOperator.CreateUser(account);
        await using var server = await StartResolverAsync(kind, op, Dir(kind));
        await using var sys = await ConnectSystemAsync(server, op);
        await RequestAsync(sys, "$SYS.REQ.CLAIMS.UPDATE", op.AccountJwts[account.GetPublicKey()]);
        await using var subscriber = await ConnectUserAsync(server, user, jwt);
        await subscriber.SendAsync("SUB a 1\r\nSUB b 2\r\nPING\r\n");
        Assert.Equal(["PONG"], (await subscriber.CollectUntilAsync("PONG")).Lines);
        await using var publisher = await ConnectUserAsync(server, user, jwt);

        var update = op.AddAccount(account, c =>
        {
            c.Nats.Limits.Payload = 4;
            c.Nats.Limits.Subscriptions = 2;
        });
        await RequestAsync(sys, "$SYS.REQ.CLAIMS.UPDATE", update);

        // At the new subscription limit already: told and closed (nats-server's subsAtLimit).
        Assert.Equal(["-ERR 'maximum subscriptions exceeded'"], await subscriber.ExpectClosedAsync());
        await publisher.SendAsync("PUB a 4\r\nabcd\r\nPUB a 5\r\nabcde\r\n");
        Assert.Equal(["-ERR 'Maximum Payload Violation'"], await publisher.ExpectClosedAsync());
    }

    [Theory]
    [MemberData(nameof(Servers))]
    public async Task New_default_permissions_apply_to_connections_made_afterwards(ServerKind kind)
    {
        var op = new TestOperator();
        var account = op.CreateAccount();
        var (user, jwt) = TestOperator.CreateUser(account);
        await using var server = await StartResolverAsync(kind, op, Dir(kind));
        await using var sys = await ConnectSystemAsync(server, op);
        await RequestAsync(sys, "$SYS.REQ.CLAIMS.UPDATE", op.AccountJwts[account.GetPublicKey()]);
        await using var before = await ConnectUserAsync(server, user, jwt);

        var update = op.AddAccount(account, c => c.Nats.DefaultPermissions = new PermissionsClaim { Publish = new PermissionClaim { Deny = ["secret.>"] } });
        await RequestAsync(sys, "$SYS.REQ.CLAIMS.UPDATE", update);
        await using var after = await ConnectUserAsync(server, user, jwt);

        await before.SendAsync("PUB secret.x 0\r\n\r\nPING\r\n");
        Assert.Equal(["PONG"], (await before.CollectUntilAsync("PONG")).Lines);
        await after.SendAsync("PUB secret.x 0\r\n\r\nPING\r\n");
        Assert.Equal(["-ERR 'Permissions Violation for Publish to \"secret.x\"'", "PONG"], (await after.CollectUntilAsync("PONG")).Lines);
    }

    [Theory]
    [MemberData(nameof(Servers))]
    public async Task Delete_needs_allow_delete_and_the_operator(ServerKind kind)
    {
        var op = new TestOperator();
        var account = op.CreateAccount();
        var (user, jwt) = TestOperator.CreateUser(account);
        await using (var server = await StartResolverAsync(kind, op, Dir(kind) + "-no-delete"))
        {
            server.Ours?.ExpectErrors();
            await using var sys = await ConnectSystemAsync(server, op);
            await RequestAsync(sys, "$SYS.REQ.CLAIMS.UPDATE", op.AccountJwts[account.GetPublicKey()]);
            var request = GenericJwt(op.Key, new { accounts = new[] { account.GetPublicKey() } });
            Assert.Equal(
                (500, null, $"delete accounts request by {op.PublicKey} failed - delete must be enabled in server config"),
                Answer(await RequestAsync(sys, "$SYS.REQ.CLAIMS.DELETE", request)));
        }

        await using var deleting = await StartResolverAsync(kind, op, Dir(kind), allowDelete: true);
        deleting.Ours?.ExpectErrors();
        await using var admin = await ConnectSystemAsync(deleting, op);
        await RequestAsync(admin, "$SYS.REQ.CLAIMS.UPDATE", op.AccountJwts[account.GetPublicKey()]);
        await using var client = await ConnectUserAsync(deleting, user, jwt);

        var stranger = TestJwt.NewKey(PrefixByte.Operator);
        Assert.Equal(
            (500, null, $"delete accounts request by {stranger.GetPublicKey()} failed - not trusted"),
            Answer(await RequestAsync(admin, "$SYS.REQ.CLAIMS.DELETE", GenericJwt(stranger, new { accounts = new[] { account.GetPublicKey() } }))));
        Assert.Equal(
            (500, null, $"delete accounts request by {op.PublicKey} failed - not allowed to delete system account"),
            Answer(await RequestAsync(admin, "$SYS.REQ.CLAIMS.DELETE", GenericJwt(op.Key, new { accounts = new[] { op.SystemAccount.GetPublicKey() } }))));
        Assert.Equal(
            (500, null, $"delete accounts request by {op.PublicKey} failed - malformed request"),
            Answer(await RequestAsync(admin, "$SYS.REQ.CLAIMS.DELETE", GenericJwt(op.Key, new { accounts = new[] { "nope" } }))));

        Assert.Equal(
            (200, null, "deleted 1 accounts"),
            Answer(await RequestAsync(admin, "$SYS.REQ.CLAIMS.DELETE", GenericJwt(op.Key, new { accounts = new[] { account.GetPublicKey() } }))));

        Assert.Equal(["-ERR 'Account Authentication Expired'"], await client.ExpectClosedAsync());
        Assert.True(File.Exists(Path.Combine(Dir(kind), account.GetPublicKey() + ".jwt.deleted")));
        Assert.False(File.Exists(Path.Combine(Dir(kind), account.GetPublicKey() + ".jwt")));
        await using var refused = await deleting.ConnectAsync();
        await refused.SendAsync(Connect(jwt, Sign(user, Nonce(refused))) + "PING\r\n");
        Assert.Equal(["-ERR 'Authorization Violation'"], await refused.ExpectClosedAsync());
        using var list = JsonDocument.Parse(await RequestAsync(admin, "$SYS.REQ.CLAIMS.LIST", string.Empty));
        Assert.Equal([op.SystemAccount.GetPublicKey()], list.RootElement.GetProperty("data").EnumerateArray().Select(e => e.GetString()!).ToArray());
    }

    [Theory]
    [MemberData(nameof(Servers))]
    public async Task The_memory_resolver_updates_only_accounts_in_use(ServerKind kind)
    {
        var op = new TestOperator();
        var account = op.CreateAccount();
        var unused = op.CreateAccount();
        var (user, jwt) = TestOperator.CreateUser(account);
        await using var server = await OperatorModeTests.StartAsync(kind, op);
        server.Ours?.ExpectErrors();
        var (sysUser, sysJwt) = TestOperator.CreateUser(op.SystemAccount);
        await using var sys = await NatsClients.ConnectAsync(server.Url, "sys", o => o with { AuthOpts = new NatsAuthOpts { Jwt = sysJwt, Seed = sysUser.GetSeed() } });
        await using var first = await ConnectUserAsync(server, user, jwt);
        await using var second = await ConnectUserAsync(server, user, jwt);

        var update = op.AddAccount(account, c => c.Nats.Limits.Connections = 1);
        Assert.Equal((200, account.GetPublicKey(), "jwt updated"), Answer(await RequestAsync(sys, $"$SYS.REQ.ACCOUNT.{account.GetPublicKey()}.CLAIMS.UPDATE", update)));
        Assert.Equal(["-ERR 'maximum account active connections exceeded'"], await first.ExpectClosedAsync());

        Assert.Equal(
            (200, unused.GetPublicKey(), "jwt update skipped"),
            Answer(await RequestAsync(sys, $"$SYS.REQ.ACCOUNT.{unused.GetPublicKey()}.CLAIMS.UPDATE", op.AccountJwts[unused.GetPublicKey()])));
        var untrusted = TestJwt.Account(new TestOperator().Key, account.GetPublicKey());
        Assert.Equal(
            (500, account.GetPublicKey(), "jwt update resulted in error - account validation failed"),
            Answer(await RequestAsync(sys, $"$SYS.REQ.ACCOUNT.{account.GetPublicKey()}.CLAIMS.UPDATE", untrusted)));
        await Assert.ThrowsAsync<NatsNoRespondersException>(() => RequestAsync(sys, "$SYS.REQ.CLAIMS.UPDATE", update));
    }

    [Theory]
    [MemberData(nameof(Servers))]
    public async Task The_cache_resolver_skips_accounts_not_in_use(ServerKind kind)
    {
        var op = new TestOperator();
        var account = op.CreateAccount();
        await using var server = await StartResolverAsync(kind, op, Dir(kind), type: "cache");
        await using var sys = await ConnectSystemAsync(server, op);

        Assert.Equal((200, account.GetPublicKey(), "jwt update cache skipped"), Answer(await RequestAsync(sys, "$SYS.REQ.CLAIMS.UPDATE", op.AccountJwts[account.GetPublicKey()])));
        var system = op.AddAccount(op.SystemAccount, c => c.Name = "SYS2");
        Assert.Equal((200, op.SystemAccount.GetPublicKey(), "jwt updated cache"), Answer(await RequestAsync(sys, "$SYS.REQ.CLAIMS.UPDATE", system)));
        await Assert.ThrowsAsync<NatsNoRespondersException>(() => RequestAsync(sys, $"$SYS.REQ.ACCOUNT.{account.GetPublicKey()}.CLAIMS.LOOKUP", string.Empty));
    }
}
