using System.Text.Json;
using Broker.Core.Auth;
using Broker.Core.Internal.Jwt;
using NATS.Client.Core;
using NATS.NKeys;
using static Broker.Security.Tests.OperatorModeTests;

namespace Broker.Security.Tests;

/// <summary>
/// Authorization callout in operator mode (nats-server 2.10: an account JWT's <c>authorization</c> block): a user of
/// the callout account that is not one of its <c>auth_users</c> (here a bearer "sentinel") is decided by the service,
/// which runs as an auth user with its own JWT; the user JWT it returns is issued by the callout account or by one of
/// its <c>allowed_accounts</c> (or their signing keys, scoped ones giving their template), and that account places the
/// client. Refusals are logged with nats-server 2.10's reasons. Ours only: nats-server 2.9.10 has no callouts, and no
/// 2.10+ binary is on this machine; the behaviour follows nats-server v2.10.0's auth_callout.go and auth.go.
/// </summary>
public sealed class OperatorCalloutTests
{
    private const string Violation = "-ERR 'Authorization Violation'";

    private readonly TestOperator op = new();
    private readonly KeyPair auth = TestJwt.NewKey(PrefixByte.Account);
    private readonly KeyPair app = TestJwt.NewKey(PrefixByte.Account);
    private readonly KeyPair other = TestJwt.NewKey(PrefixByte.Account);
    private readonly KeyPair service = TestJwt.NewKey(PrefixByte.User);
    private readonly KeyPair sentinel = TestJwt.NewKey(PrefixByte.User);

    public OperatorCalloutTests()
    {
        SentinelJwt = TestJwt.User(auth, sentinel.GetPublicKey(), c => c.Nats.BearerToken = true);
        op.AddAccount(app);
        op.AddAccount(other);
        AddAuthAccount();
    }

    /// <summary>A bearer user of AUTH that any client may present: the service decides who it becomes.</summary>
    private string SentinelJwt { get; }

    /// <summary>(Re)issues the callout account: <c>auth_users</c> the service, <c>allowed_accounts</c> APP, adjusted by <paramref name="configure"/>.</summary>
    private void AddAuthAccount(Action<ExternalAuthorizationClaim>? configure = null, Action<AccountClaims>? account = null) =>
        op.AddAccount(auth, c =>
        {
            c.Name = "AUTH";
            c.Nats.Authorization = new ExternalAuthorizationClaim { AuthUsers = [service.GetPublicKey()], AllowedAccounts = [app.GetPublicKey()] };
            configure?.Invoke(c.Nats.Authorization);
            account?.Invoke(c);
        });

    private Task<TestBroker> StartAsync() => TestBroker.StartAsync(o =>
    {
        o.Operator.Operators.Add(op.Jwt);
        o.Operator.Resolver = AccountResolverType.Memory;
        foreach (var (key, jwt) in op.AccountJwts)
        {
            o.Operator.ResolverPreload[key] = jwt;
        }
    });

    /// <summary>The callout service, logged in as the auth user with its JWT; it signs responses with the callout account's key.</summary>
    private Task<CalloutService> ServiceAsync(TestBroker broker, Func<AuthorizationRequestClaims, CalloutAnswer> decide, KeyPair? curve = null, KeyPair? sealWith = null) =>
        CalloutService.StartAsync(
            broker.Url,
            auth,
            decide,
            user: null,
            curve: curve,
            sealWith: sealWith,
            configure: o => o with { AuthOpts = new NatsAuthOpts { Jwt = TestJwt.User(auth, service.GetPublicKey()), Seed = service.GetSeed() } });

    private Task<NatsConnection> SentinelAsync(TestBroker broker, string name) =>
        NatsClients.ConnectAsync(broker.Url, name, o => o with { AuthOpts = new NatsAuthOpts { Jwt = SentinelJwt, Seed = sentinel.GetSeed() } });

    private async Task<IReadOnlyList<string>> RefusedAsync(TestBroker broker)
    {
        await using var client = await RawClient.ConnectAsync(broker.Port);
        await client.SendAsync(Connect(SentinelJwt, null) + "PING\r\n");
        return await client.ExpectClosedAsync();
    }

    [Fact(Timeout = 30_000)]
    public async Task Sentinel_is_placed_by_the_service_in_the_callout_account_or_an_allowed_one()
    {
        var (appUser, appJwt) = TestOperator.CreateUser(app);
        await using var broker = await StartAsync();
        await using var svc = await ServiceAsync(broker, request => request.Nats.ConnectOptions.Name == "to-app"
            ? new CalloutAnswer.Custom("", UserSigner: app)
            : new CalloutAnswer.Allow(""));

        // A user of APP itself (APP has no callout) is not asked about.
        await using var direct = await NatsClients.ConnectAsync(broker.Url, "direct", o => o with { AuthOpts = new NatsAuthOpts { Jwt = appJwt, Seed = appUser.GetSeed() } });
        await using var orders = await direct.SubscribeCoreAsync<string>("orders.>");
        await direct.PingAsync();
        Assert.Empty(svc.Requests);

        await using var toApp = await SentinelAsync(broker, "to-app");
        await toApp.PublishAsync("orders.1", "from a callout user");
        Assert.Equal("from a callout user", (await orders.NextAsync()).Data);

        // Placed in the callout account itself: it may not publish requests there.
        await using (var inAuth = await RawClient.ConnectAsync(broker.Port))
        {
            await inAuth.SendAsync(Connect(SentinelJwt, null) + "PUB $SYS.REQ.USER.AUTH 0\r\n\r\nPUB orders.2 0\r\n\r\n");
            Assert.Equal(["-ERR 'Permissions Violation for Publish to \"$SYS.REQ.USER.AUTH\"'", "PONG"], (await inAuth.PingAndCollectAsync()).Lines);
        }

        Assert.True(orders.IsEmpty());
        var request = svc.Requests.First().Claims;
        Assert.Equal(broker.Server.ServerId, request.Issuer);
        Assert.Equal(auth.GetPublicKey(), request.Subject);
        Assert.Equal("nats-authorization-request", request.Audience);
        Assert.Equal(SentinelJwt, request.Nats.ConnectOptions.Jwt);
        Assert.Equal(sentinel.GetPublicKey(), request.Nats.ClientInfo.User);
        Assert.Equal(sentinel.GetPublicKey()[..8], request.Nats.ClientInfo.NameTag);
        Assert.Null(request.Nats.Server.XKey);
        Assert.All(svc.Requests, r => Assert.False(r.Sealed));
    }

    public static TheoryData<string> Placements => ["signing-key", "any-account"];

    [Theory(Timeout = 30_000)]
    [MemberData(nameof(Placements))]
    public async Task Service_may_answer_through_a_signing_key_and_place_anywhere_with_a_star(string variant)
    {
        var signingKey = TestJwt.NewKey(PrefixByte.Account);
        AddAuthAccount(
            a => a.AllowedAccounts = variant == "any-account" ? [ExternalAuthorizationClaim.AnyAccount] : a.AllowedAccounts,
            c => c.Nats.SigningKeys = new() { [signingKey.GetPublicKey()] = null });
        var (otherUser, otherJwt) = TestOperator.CreateUser(other);
        await using var broker = await StartAsync();
        await using var svc = await ServiceAsync(broker, _ => variant == "signing-key"
            ? new CalloutAnswer.Custom("", Signer: signingKey, UserSigner: signingKey, User: c => c.Nats.IssuerAccount = auth.GetPublicKey())
            : new CalloutAnswer.Custom("", UserSigner: other));
        await using var inOther = await NatsClients.ConnectAsync(broker.Url, "other", o => o with { AuthOpts = new NatsAuthOpts { Jwt = otherJwt, Seed = otherUser.GetSeed() } });
        await using var sub = await inOther.SubscribeCoreAsync<string>("x");
        await inOther.PingAsync();

        await using var client = await SentinelAsync(broker, "client");
        await client.PublishAsync("x", "hello");
        await client.PingAsync();
        Assert.Single(svc.Requests);

        // Through the signing key the client is in AUTH and OTHER hears nothing; with "*" it is in OTHER.
        if (variant == "any-account")
        {
            Assert.Equal("hello", (await sub.NextAsync()).Data);
        }
        else
        {
            await inOther.PingAsync();
            Assert.True(sub.IsEmpty());
        }
    }

    public static TheoryData<string, string> BadResponses => new()
    {
        { "not-allowed", "Account \"{other}\" not permitted as valid account option for auth callout for account \"{auth}\"" },
        { "unknown-signer", "Auth callout signing key is unknown" },
        { "unknown-user-issuer", "User JWT issuer \"{stranger}\" is not known" },
        { "unknown-account", "No valid account \"{stranger}\" for auth callout response on account \"{auth}\": " },
        { "error", "Auth callout service returned an error: go away" },
        { "expired-user", "Error validating user JWT: claim is expired" },
    };

    [Theory(Timeout = 30_000)]
    [MemberData(nameof(BadResponses))]
    public async Task Response_that_does_not_check_out_is_refused_with_nats_servers_reason(string variant, string logged)
    {
        var stranger = TestJwt.NewKey(PrefixByte.Account);
        AddAuthAccount(a => a.AllowedAccounts = [app.GetPublicKey(), stranger.GetPublicKey()]);
        await using var broker = await StartAsync();
        await using var svc = await ServiceAsync(broker, _ => variant switch
        {
            "not-allowed" => new CalloutAnswer.Custom("", UserSigner: other),
            "unknown-signer" => new CalloutAnswer.Custom("", Signer: stranger),
            "unknown-user-issuer" => new CalloutAnswer.Custom("", UserSigner: stranger, User: c => c.Nats.IssuerAccount = app.GetPublicKey()),
            "unknown-account" => new CalloutAnswer.Custom("", UserSigner: stranger),
            "error" => new CalloutAnswer.Deny("go away"),
            "expired-user" => new CalloutAnswer.Allow("", c => c.Expires = DateTimeOffset.UtcNow.AddMinutes(-1).ToUnixTimeSeconds()),
            _ => throw new ArgumentException(variant, nameof(variant)),
        });

        Assert.Equal([Violation], await RefusedAsync(broker));
        var expected = logged.Replace("{other}", other.GetPublicKey(), StringComparison.Ordinal)
            .Replace("{auth}", auth.GetPublicKey(), StringComparison.Ordinal)
            .Replace("{stranger}", stranger.GetPublicKey(), StringComparison.Ordinal);
        Assert.True(broker.Logs.Contains(expected), string.Join(Environment.NewLine, broker.Logs.Entries.Where(e => e.Level >= Microsoft.Extensions.Logging.LogLevel.Warning)));
    }

    [Fact(Timeout = 30_000)]
    public async Task Refusal_is_reported_in_the_callout_account_with_its_reason()
    {
        await using var broker = await StartAsync();
        await using var svc = await ServiceAsync(broker, _ => new CalloutAnswer.Deny("go away"));
        await using var watcher = await NatsClients.ConnectAsync(broker.Url, "watcher", o => o with { AuthOpts = new NatsAuthOpts { Jwt = TestJwt.User(auth, service.GetPublicKey()), Seed = service.GetSeed() } });
        await using var events = await watcher.SubscribeCoreAsync<byte[]>("$SYS.ACCOUNT.CLIENT.AUTH.ERR");
        await watcher.PingAsync();

        Assert.Equal([Violation], await RefusedAsync(broker));

        using var doc = JsonDocument.Parse((await events.NextAsync()).Data!);
        Assert.Equal("Auth callout service returned an error: go away", doc.RootElement.GetProperty("reason").GetString());
        Assert.Equal(auth.GetPublicKey(), doc.RootElement.GetProperty("client").GetProperty("acc").GetString());
    }

    [Fact(Timeout = 30_000)]
    public async Task Xkey_of_the_account_seals_requests_with_the_curve_key_info_announces()
    {
        var curve = TestJwt.NewKey(PrefixByte.Curve);
        var stranger = TestJwt.NewKey(PrefixByte.Account);
        AddAuthAccount(a => a.XKey = curve.GetPublicKey());
        await using var broker = await StartAsync();

        // A sealed answer proved itself by opening: its signer is not asked about (nats-server skips the check).
        await using (var svc = await ServiceAsync(broker, _ => new CalloutAnswer.Custom("", Signer: stranger, UserSigner: auth), curve: curve))
        {
            await using var client = await RawClient.ConnectAsync(broker.Port);
            using var info = JsonDocument.Parse(client.Info!["INFO ".Length..]);
            var xkey = info.RootElement.GetProperty("xkey").GetString();
            await client.SendAsync(Connect(SentinelJwt, null));
            Assert.Equal(["PONG"], (await client.PingAndCollectAsync()).Lines);

            var received = Assert.Single(svc.Requests);
            Assert.True(received.Sealed);
            Assert.Equal(xkey, received.XKeyHeader);
            Assert.Equal(xkey, received.Claims.Nats.Server.XKey);
        }

        // Sealed for the wrong key: the broker cannot open the answer.
        await using var wrong = await ServiceAsync(broker, _ => new CalloutAnswer.Allow(""), curve: curve, sealWith: TestJwt.NewKey(PrefixByte.Curve));
        Assert.Equal([Violation], await RefusedAsync(broker));
        Assert.True(broker.Logs.Contains($"Error decrypting auth callout response on account \"{auth.GetPublicKey()}\""));
    }

    [Fact(Timeout = 30_000)]
    public async Task Scoped_signing_key_of_the_placement_account_gives_the_user_its_template()
    {
        var scoped = TestJwt.NewKey(PrefixByte.Account);
        op.AddAccount(app, c => c.Nats.SigningKeys = new()
        {
            [scoped.GetPublicKey()] = new UserScopeClaim
            {
                Key = scoped.GetPublicKey(),
                Template = new UserPermissionLimitsClaim { Publish = new PermissionClaim { Allow = ["app.{{name()}}.>"] }, Subscriptions = -1, Data = -1, Payload = -1 },
            },
        });
        await using var broker = await StartAsync();
        await using var svc = await ServiceAsync(broker, _ => new CalloutAnswer.Custom("", UserSigner: scoped, User: c =>
        {
            c.Name = "alice";
            c.Nats.IssuerAccount = app.GetPublicKey();
            (c.Nats.Subscriptions, c.Nats.Data, c.Nats.Payload) = (0, 0, 0);
        }));
        await using var client = await RawClient.ConnectAsync(broker.Port);
        await client.SendAsync(Connect(SentinelJwt, null) + "PUB app.alice.x 0\r\n\r\nPUB app.bob.x 0\r\n\r\n");

        Assert.Equal(["-ERR 'Permissions Violation for Publish to \"app.bob.x\"'", "PONG"], (await client.PingAndCollectAsync()).Lines);
    }

    [Fact(Timeout = 30_000)]
    public async Task Auth_users_are_not_asked_about_and_may_not_publish_requests()
    {
        await using var broker = await StartAsync();
        await using var svc = await ServiceAsync(broker, _ => new CalloutAnswer.Deny("no"));
        var serviceJwt = TestJwt.User(auth, service.GetPublicKey());
        await using var client = await RawClient.ConnectAsync(broker.Port);
        await client.SendAsync(Connect(serviceJwt, Sign(service, Nonce(client))) + "PUB $SYS.REQ.USER.AUTH 0\r\n\r\n");

        Assert.Equal(["-ERR 'Permissions Violation for Publish to \"$SYS.REQ.USER.AUTH\"'", "PONG"], (await client.PingAndCollectAsync()).Lines);
        Assert.Empty(svc.Requests);
    }

    public static TheoryData<string, string> InvalidBlocks => new()
    {
        { "accounts-without-users", "External authorization cannot have accounts without users specified" },
        { "bad-user", "AuthUser \"UNOTAKEY\" is not a valid user public key" },
        { "bad-account", "Account \"ANOTAKEY\" is not a valid account public key" },
        { "star-and-more", "AllowedAccounts can only be a list of accounts or \"*\"" },
        { "bad-xkey", "XKey \"XNOTAKEY\" is not a valid public xkey" },
    };

    [Theory(Timeout = 30_000)]
    [MemberData(nameof(InvalidBlocks))]
    public async Task Account_with_an_invalid_authorization_block_fails_validation(string variant, string logged)
    {
        AddAuthAccount(a =>
        {
            switch (variant)
            {
                case "accounts-without-users": a.AuthUsers = []; break;
                case "bad-user": a.AuthUsers = ["UNOTAKEY"]; break;
                case "bad-account": a.AllowedAccounts = ["ANOTAKEY"]; break;
                case "star-and-more": a.AllowedAccounts = ["*", app.GetPublicKey()]; break;
                case "bad-xkey": a.XKey = "XNOTAKEY"; break;
            }
        });
        await using var broker = await StartAsync();

        Assert.Equal([Violation], await RefusedAsync(broker));
        Assert.True(broker.Logs.Contains(logged));
    }

    [Fact(Timeout = 30_000)]
    public async Task Info_carries_the_servers_curve_key_in_every_mode()
    {
        await using var broker = await TestBroker.StartAsync();
        await using var first = await RawClient.ConnectAsync(broker.Port);
        await using var second = await RawClient.ConnectAsync(broker.Port);
        using var one = JsonDocument.Parse(first.Info!["INFO ".Length..]);
        using var two = JsonDocument.Parse(second.Info!["INFO ".Length..]);

        var xkey = one.RootElement.GetProperty("xkey").GetString();
        Assert.True(KeyPair.IsValidPublicKey(PrefixByte.Curve, xkey!));
        Assert.Equal(xkey, two.RootElement.GetProperty("xkey").GetString());
    }
}
