using Broker.Core;
using Broker.Core.Auth;

namespace Broker.Client.Tests;

/// <summary>
/// Authentication and permissions as the legacy .NET client sees them, against our broker and nats-server with
/// equivalent settings. The client reports a refused CONNECT as a connect exception, and (being pre-2.x) treats a
/// permissions -ERR as fatal: the connection closes with the error as its last error.
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

        using (var good = NatsClientConnection.Connect(server.Url, o => o.Token = "s3cret"))
        {
            RoundTrip(good);
        }

        AssertRefused(server.Url, o => o.Token = "wrong");
        AssertRefused(server.Url, _ => { });
    }

    [Theory(Timeout = 60_000)]
    [MemberData(nameof(Servers))]
    public async Task User_and_password_are_required_and_checked(ServerKind kind)
    {
        await using var server = await ServerUnderTest.StartAsync(
            kind,
            o => (o.Authorization.User, o.Authorization.Password) = ("alice", "pa55"),
            "authorization { user: alice, password: \"pa55\" }");

        using (var good = NatsClientConnection.Connect(server.Url, o => (o.User, o.Password) = ("alice", "pa55")))
        {
            RoundTrip(good);
        }

        using (var inUrl = NatsClientConnection.Connect(server.Url.Replace("nats://", "nats://alice:pa55@", StringComparison.Ordinal)))
        {
            RoundTrip(inUrl);
        }

        AssertRefused(server.Url, o => (o.User, o.Password) = ("alice", "nope"));
        AssertRefused(server.Url, o => (o.User, o.Password) = ("bob", "pa55"));
    }

    [Theory(Timeout = 60_000)]
    [MemberData(nameof(Servers))]
    public async Task Bcrypt_password_of_a_listed_user_is_verified(ServerKind kind)
    {
        await using var server = await ServerUnderTest.StartAsync(
            kind,
            o => o.Authorization.Users.Add(new UserOptions { User = "carol", Password = BcryptOfUU }),
            "authorization { users = [ { user: carol, password: \"" + BcryptOfUU + "\" } ] }");

        using (var good = NatsClientConnection.Connect(server.Url, o => (o.User, o.Password) = ("carol", "U*U")))
        {
            RoundTrip(good);
        }

        AssertRefused(server.Url, o => (o.User, o.Password) = ("carol", "U*U*"));

        // The hash itself is not a password.
        AssertRefused(server.Url, o => (o.User, o.Password) = ("carol", BcryptOfUU));
    }

    [Theory(Timeout = 60_000)]
    [MemberData(nameof(Servers))]
    public async Task Publish_violation_reaches_the_client_as_its_error(ServerKind kind)
    {
        await using var server = await StartWithRestrictedUserAsync(kind);
        using var client = ConnectRestricted(server);
        using var allowed = client.Connection.SubscribeSync("public.news");
        client.Connection.Publish("public.news", [1]);
        Assert.Equal([1], allowed.NextMessage(NatsClientConnection.DefaultTimeoutMilliseconds).Data);

        client.Connection.Publish("admin.shutdown", [2]);
        var error = await client.WaitClosedAsync();
        Assert.NotNull(error);
        Assert.Contains("permissions violation for publish to \"admin.shutdown", error.Message, StringComparison.Ordinal);
    }

    [Theory(Timeout = 60_000)]
    [MemberData(nameof(Servers))]
    public async Task Subscribe_violation_reaches_the_client_as_its_error(ServerKind kind)
    {
        await using var server = await StartWithRestrictedUserAsync(kind);
        using var client = ConnectRestricted(server);
        using var denied = client.Connection.SubscribeSync("admin.audit");
        var error = await client.WaitClosedAsync();
        Assert.NotNull(error);
        Assert.Contains("permissions violation for subscription to \"admin.audit", error.Message, StringComparison.Ordinal);
    }

    [Theory(Timeout = 60_000)]
    [MemberData(nameof(Servers))]
    public async Task Denied_subject_is_never_delivered_to_a_wildcard_subscriber(ServerKind kind)
    {
        await using var server = await StartWithRestrictedUserAsync(kind);
        using var restricted = ConnectRestricted(server);
        using var wide = restricted.Connection.SubscribeSync("public.>");
        restricted.Connection.Flush(NatsClientConnection.DefaultTimeoutMilliseconds);

        using var admin = NatsClientConnection.Connect(server.Url, o => (o.User, o.Password) = ("admin", "admin"));
        admin.Connection.Publish("public.secret", [1]);
        admin.Connection.Publish("public.news", [2]);
        admin.Connection.Flush(NatsClientConnection.DefaultTimeoutMilliseconds);

        Assert.Equal([2], wide.NextMessage(NatsClientConnection.DefaultTimeoutMilliseconds).Data);
        restricted.Connection.Flush(NatsClientConnection.DefaultTimeoutMilliseconds);
        Assert.Equal(0, wide.QueuedMessageCount);
        Assert.False(restricted.Closed.IsCompleted);
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

    private static NatsClientConnection ConnectRestricted(ServerUnderTest server) =>
        NatsClientConnection.Connect(server.Url, o => (o.User, o.Password) = ("app", "app"), "restricted");

    private static void RoundTrip(NatsClientConnection client)
    {
        using var sub = client.Connection.SubscribeSync("auth.check");
        client.Connection.Publish("auth.check", [42]);
        Assert.Equal([42], sub.NextMessage(NatsClientConnection.DefaultTimeoutMilliseconds).Data);
    }

    private static void AssertRefused(string url, Action<NATS.Client.Options> configure)
    {
        var error = Assert.ThrowsAny<NATSException>(() => NatsClientConnection.Connect(url, configure).Dispose());
        Assert.Contains("authorization violation", error.Message, StringComparison.OrdinalIgnoreCase);
    }
}
