using Broker.Core;
using Broker.Core.Auth;
using NATS.NKeys;

namespace Broker.Client.Tests;

/// <summary>
/// Authentication and permissions as the .NET client sees them, against our broker and nats-server with equivalent
/// settings. The client reports a refused CONNECT as a connect exception carrying the server's -ERR, and (being a 2.x
/// client) keeps the connection after a permissions -ERR, reporting it through its server-error event.
/// </summary>
public sealed class AuthTests
{
    // bcrypt of "U*U" (a published test vector, cost 5 to keep the test fast).
    private const string BcryptOfUU = "$2a$05$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW";

    public static TheoryData<ServerKind> Servers => new() { ServerKind.Ours, ServerKind.Reference };

    [Theory(Timeout = 60_000)]
    [MemberData(nameof(Servers))]
    public async Task Token_is_required_and_checked(ServerKind kind)
    {
        await using var server = await ServerUnderTest.StartAsync(
            kind, o => o.Authorization.Token = "s3cret", "authorization { token: \"s3cret\" }");

        await using (var good = await NatsClients.ConnectAsync(server.Url, configure: o => o with { AuthOpts = new NatsAuthOpts { Token = "s3cret" } }))
        {
            await RoundTripAsync(good);
        }

        await AssertRefusedAsync(server.Url, o => o with { AuthOpts = new NatsAuthOpts { Token = "wrong" } });
        await AssertRefusedAsync(server.Url, o => o);
    }

    [Theory(Timeout = 60_000)]
    [MemberData(nameof(Servers))]
    public async Task User_and_password_are_required_and_checked(ServerKind kind)
    {
        await using var server = await ServerUnderTest.StartAsync(
            kind,
            o => (o.Authorization.User, o.Authorization.Password) = ("alice", "pa55"),
            "authorization { user: alice, password: \"pa55\" }");

        await using (var good = await NatsClients.ConnectAsync(server.Url, configure: o => o.WithUser("alice", "pa55")))
        {
            await RoundTripAsync(good);
        }

        await using (var inUrl = await NatsClients.ConnectAsync(server.Url.Replace("nats://", "nats://alice:pa55@", StringComparison.Ordinal)))
        {
            await RoundTripAsync(inUrl);
        }

        await AssertRefusedAsync(server.Url, o => o.WithUser("alice", "nope"));
        await AssertRefusedAsync(server.Url, o => o.WithUser("bob", "pa55"));
    }

    [Theory(Timeout = 60_000)]
    [MemberData(nameof(Servers))]
    public async Task Bcrypt_password_of_a_listed_user_is_verified(ServerKind kind)
    {
        await using var server = await ServerUnderTest.StartAsync(
            kind,
            o => o.Authorization.Users.Add(new UserOptions { User = "carol", Password = BcryptOfUU }),
            "authorization { users = [ { user: carol, password: \"" + BcryptOfUU + "\" } ] }");

        await using (var good = await NatsClients.ConnectAsync(server.Url, configure: o => o.WithUser("carol", "U*U")))
        {
            await RoundTripAsync(good);
        }

        await AssertRefusedAsync(server.Url, o => o.WithUser("carol", "U*U*"));

        // The hash itself is not a password.
        await AssertRefusedAsync(server.Url, o => o.WithUser("carol", BcryptOfUU));
    }

    [Theory(Timeout = 60_000)]
    [MemberData(nameof(Servers))]
    public async Task Nkey_user_authenticates_by_signing_the_nonce_and_gets_its_permissions(ServerKind kind)
    {
        using var alice = KeyPair.CreatePair(PrefixByte.User);
        using var mallory = KeyPair.CreatePair(PrefixByte.User);
        var publicKey = alice.GetPublicKey();
        await using var server = await ServerUnderTest.StartAsync(
            kind,
            o => o.Authorization.Users.Add(new UserOptions
            {
                Nkey = publicKey,
                Permissions = new PermissionsOptions { Publish = new SubjectPermissionOptions { Allow = ["auth.>"] } },
            }),
            "authorization { users = [ { nkey: " + publicKey + ", permissions: { publish: { allow: [\"auth.>\"] } } } ] }");

        await using (var good = await NatsClients.ConnectAsync(server.Url, configure: o => o with { AuthOpts = new NatsAuthOpts { NKey = publicKey, Seed = alice.GetSeed() } }))
        {
            var events = ClientEvents.Watch(good);
            await RoundTripAsync(good);
            await good.PublishAsync("other.subject", new byte[] { 1 });
            Assert.StartsWith("Permissions Violation for Publish to \"other.subject\"", await events.ServerErrorAsync(), StringComparison.Ordinal);
        }

        // Another key's seed signs, but not for this key; an unknown key is refused; so is a client without credentials.
        await AssertRefusedAsync(server.Url, o => o with { AuthOpts = new NatsAuthOpts { NKey = publicKey, Seed = mallory.GetSeed() } });
        await AssertRefusedAsync(server.Url, o => o with { AuthOpts = new NatsAuthOpts { NKey = mallory.GetPublicKey(), Seed = mallory.GetSeed() } });
        await AssertRefusedAsync(server.Url, o => o);
    }

    [Theory(Timeout = 60_000)]
    [MemberData(nameof(Servers))]
    public async Task Nkey_and_bcrypt_users_share_one_users_list(ServerKind kind)
    {
        using var alice = KeyPair.CreatePair(PrefixByte.User);
        await using var server = await ServerUnderTest.StartAsync(
            kind,
            o =>
            {
                o.Authorization.Users.Add(new UserOptions { Nkey = alice.GetPublicKey() });
                o.Authorization.Users.Add(new UserOptions { User = "carol", Password = BcryptOfUU });
            },
            "authorization { users = [ { nkey: " + alice.GetPublicKey() + " }, { user: carol, password: \"" + BcryptOfUU + "\" } ] }");

        await using (var nkey = await NatsClients.ConnectAsync(server.Url, configure: o => o with { AuthOpts = new NatsAuthOpts { NKey = alice.GetPublicKey(), Seed = alice.GetSeed() } }))
        {
            await RoundTripAsync(nkey);
        }

        await using (var bcrypt = await NatsClients.ConnectAsync(server.Url, configure: o => o.WithUser("carol", "U*U")))
        {
            await RoundTripAsync(bcrypt);
        }

        await AssertRefusedAsync(server.Url, o => o.WithUser("carol", "wrong"));
    }

    [Theory(Timeout = 60_000)]
    [MemberData(nameof(Servers))]
    public async Task Publish_violation_reaches_the_client_as_its_error(ServerKind kind)
    {
        await using var server = await StartWithRestrictedUserAsync(kind);
        await using var client = await ConnectRestrictedAsync(server);
        var events = ClientEvents.Watch(client);
        await using var allowed = await client.SubscribeCoreAsync<byte[]>("public.news");
        await client.PublishAsync("public.news", new byte[] { 1 });
        Assert.Equal([1], (await allowed.NextAsync()).Data);

        await client.PublishAsync("admin.shutdown", new byte[] { 2 });
        var error = await events.ServerErrorAsync();
        Assert.StartsWith("Permissions Violation for Publish to \"admin.shutdown\"", error, StringComparison.Ordinal);

        // The connection stays usable after the violation, as nats-server keeps it.
        await client.PublishAsync("public.news", new byte[] { 3 });
        Assert.Equal([3], (await allowed.NextAsync()).Data);
        Assert.False(events.Disconnected.IsCompleted);
    }

    [Theory(Timeout = 60_000)]
    [MemberData(nameof(Servers))]
    public async Task Subscribe_violation_reaches_the_client_as_its_error(ServerKind kind)
    {
        await using var server = await StartWithRestrictedUserAsync(kind);
        await using var client = await ConnectRestrictedAsync(server);
        var events = ClientEvents.Watch(client);
        await using var denied = await client.SubscribeCoreAsync<byte[]>("admin.audit");
        var error = await events.ServerErrorAsync();
        Assert.StartsWith("Permissions Violation for Subscription to \"admin.audit\"", error, StringComparison.Ordinal);
        await client.PingAsync();
        Assert.False(events.Disconnected.IsCompleted);
    }

    [Theory(Timeout = 60_000)]
    [MemberData(nameof(Servers))]
    public async Task Denied_subject_is_never_delivered_to_a_wildcard_subscriber(ServerKind kind)
    {
        await using var server = await StartWithRestrictedUserAsync(kind);
        await using var restricted = await ConnectRestrictedAsync(server);
        var events = ClientEvents.Watch(restricted);
        await using var wide = await restricted.SubscribeCoreAsync<byte[]>("public.>");
        await restricted.PingAsync();

        await using var admin = await NatsClients.ConnectAsync(server.Url, configure: o => o.WithUser("admin", "admin"));
        await admin.PublishAsync("public.secret", new byte[] { 1 });
        await admin.PublishAsync("public.news", new byte[] { 2 });
        await admin.PingAsync();

        Assert.Equal([2], (await wide.NextAsync()).Data);
        await restricted.PingAsync();
        Assert.True(wide.IsEmpty());
        Assert.Empty(events.ServerErrors);
        Assert.False(events.Disconnected.IsCompleted);
    }

    private static Task<ServerUnderTest> StartWithRestrictedUserAsync(ServerKind kind) => ServerUnderTest.StartAsync(
        kind,
        o =>
        {
            o.Authorization.Users.Add(new UserOptions { User = "admin", Password = "admin" });
            o.Authorization.Users.Add(new UserOptions
            {
                User = "app",
                Password = "app",
                Permissions = new PermissionsOptions
                {
                    Publish = new SubjectPermissionOptions { Allow = ["public.>", "_INBOX.>"] },
                    Subscribe = new SubjectPermissionOptions { Allow = ["public.>", "_INBOX.>"], Deny = ["public.secret"] },
                },
            });
        },
        """
        authorization {
          users = [
            { user: admin, password: admin }
            { user: app, password: app, permissions: {
                publish: { allow: ["public.>", "_INBOX.>"] }
                subscribe: { allow: ["public.>", "_INBOX.>"], deny: ["public.secret"] } } }
          ]
        }
        """);

    private static Task<NatsConnection> ConnectRestrictedAsync(ServerUnderTest server) =>
        NatsClients.ConnectAsync(server.Url, "restricted", o => o.WithUser("app", "app"));

    private static async Task RoundTripAsync(NatsConnection client)
    {
        await using var sub = await client.SubscribeCoreAsync<byte[]>("auth.check");
        await client.PublishAsync("auth.check", new byte[] { 42 });
        Assert.Equal([42], (await sub.NextAsync()).Data);
    }

    private static async Task AssertRefusedAsync(string url, Func<NatsOpts, NatsOpts> configure)
    {
        var error = await Assert.ThrowsAnyAsync<NatsException>(async () => await (await NatsClients.ConnectAsync(url, configure: configure)).DisposeAsync());
        var server = FindServerError(error);
        Assert.NotNull(server);
        Assert.Equal("Authorization Violation", server.Error, ignoreCase: true);
    }

    private static NatsServerException? FindServerError(Exception? error) => error switch
    {
        null => null,
        NatsServerException server => server,
        _ => FindServerError(error.InnerException),
    };
}
