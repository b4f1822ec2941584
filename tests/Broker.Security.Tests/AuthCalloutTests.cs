using System.Diagnostics;
using System.Text.Json;
using Broker.Core;
using Broker.Core.Auth;
using Broker.Core.Internal.Jwt;
using Microsoft.Extensions.Configuration;
using NATS.Client.Core;
using NATS.NKeys;

namespace Broker.Security.Tests;

/// <summary>
/// Authorization callout (nats-server 2.10 <c>auth_callout</c>, server-config mode) with a callout service written as
/// a user would write it (<see cref="CalloutService"/>): placement into an account, refusals with nats-server's logged
/// reasons, timeout, xkey sealing, the auth users' bypass, permissions from the user JWT, expiry, and CONNECTs awaiting
/// the service without holding up other clients. Ours only: nats-server 2.9.10 has no callouts, and no 2.10+ binary is
/// on this machine.
/// </summary>
public sealed class AuthCalloutTests
{
    private const string Violation = "-ERR 'Authorization Violation'";

    private readonly KeyPair issuer = KeyPair.CreatePair(PrefixByte.Account);

    /// <summary>
    /// Accounts AUTH (the service's user <c>auth</c>, the callout account), A (user <c>a</c>, an auth user too) and B
    /// (no users: only the callout places clients there).
    /// </summary>
    private Task<TestBroker> StartAsync(Action<AuthCalloutOptions>? callout = null, Action<BrokerOptions>? configure = null) =>
        TestBroker.StartAsync(o => Configure(o, callout, configure));

    private void Configure(BrokerOptions o, Action<AuthCalloutOptions>? callout = null, Action<BrokerOptions>? configure = null)
    {
        o.Accounts.Add(new AccountOptions { Name = "AUTH", Users = [AccountIsolationTests.User("auth")] });
        o.Accounts.Add(new AccountOptions { Name = "A", Users = [AccountIsolationTests.User("a")] });
        o.Accounts.Add(new AccountOptions { Name = "B" });
        o.Authorization.AuthCallout = new AuthCalloutOptions { Issuer = issuer.GetPublicKey(), Account = "AUTH", AuthUsers = ["auth", "a"] };
        callout?.Invoke(o.Authorization.AuthCallout);
        configure?.Invoke(o);
    }

    private static string Connect(string user, string password = "secret") =>
        $"CONNECT {{\"user\":\"{user}\",\"pass\":\"{password}\",\"verbose\":false,\"pedantic\":false,\"protocol\":1,\"name\":\"{user}-app\",\"lang\":\"raw\",\"version\":\"1.0\"}}\r\n";

    private static Task<NatsConnection> ConnectAsync(TestBroker broker, string user, string password = "secret") =>
        NatsClients.ConnectAsync(broker.Url, user, o => o.WithUser(user, password));

    private static async Task<IReadOnlyList<string>> RefusedAsync(TestBroker broker, string user)
    {
        await using var client = await RawClient.ConnectAsync(broker.Port);
        await client.SendAsync(Connect(user) + "PING\r\n");
        return await client.ExpectClosedAsync();
    }

    [Fact(Timeout = 30_000)]
    public async Task Allowed_client_is_placed_in_the_account_the_user_jwt_names_and_publishes_only_there()
    {
        await using var broker = await StartAsync();
        await using var service = await CalloutService.StartAsync(broker.Url, issuer, _ => new CalloutAnswer.Allow("B"));
        await using var alice = await ConnectAsync(broker, "alice");
        await using var bob = await ConnectAsync(broker, "bob");
        await using var inA = await ConnectAsync(broker, "a", "a");

        await using var bobSub = await bob.SubscribeCoreAsync<string>("orders.>");
        await using var aSub = await inA.SubscribeCoreAsync<string>("orders.>");
        await bob.PingAsync();
        await inA.PingAsync();
        await alice.PublishAsync("orders.1", "in B");
        Assert.Equal("in B", (await bobSub.NextAsync()).Data);

        // A's subscriber is live (its own publish arrives) and saw nothing of B's.
        await inA.PublishAsync("orders.2", "in A");
        Assert.Equal("in A", (await aSub.NextAsync()).Data);
        Assert.True(aSub.IsEmpty());

        // The request: signed by the server key that is the server id, for the configured issuer, about this client.
        var requests = service.Requests.ToArray();
        Assert.Equal(2, requests.Length);
        var request = requests[0].Claims;
        Assert.Equal(broker.Server.ServerId, request.Issuer);
        Assert.Equal(broker.Server.ServerId, request.Nats.Server.Id);
        Assert.Equal(issuer.GetPublicKey(), request.Subject);
        Assert.Equal("nats-authorization-request", request.Audience);
        Assert.True(KeyPair.IsValidPublicKey(PrefixByte.User, request.Nats.UserNkey));
        Assert.NotEqual(request.Nats.UserNkey, requests[1].Claims.Nats.UserNkey);
        Assert.InRange(request.Expires - request.IssuedAt, 1, 3);
        Assert.Equal("alice", request.Nats.ClientInfo.User);
        Assert.Equal("Client", request.Nats.ClientInfo.Kind);
        Assert.Equal("nats", request.Nats.ClientInfo.Type);
        Assert.Equal("127.0.0.1", request.Nats.ClientInfo.Host);
        Assert.Equal("alice", request.Nats.ConnectOptions.Username);
        Assert.Equal("secret", request.Nats.ConnectOptions.Password);
        Assert.Equal(1, request.Nats.ConnectOptions.Protocol);
        Assert.Null(request.Nats.Tls);
        Assert.Null(requests[0].XKeyHeader);
        Assert.False(requests[0].Sealed);
    }

    [Fact(Timeout = 30_000)]
    public async Task Request_json_has_nats_io_jwt_shape()
    {
        await using var broker = await StartAsync();
        string? payload = null;
        await using var service = await CalloutService.StartAsync(broker.Url, issuer, request =>
        {
            payload = JsonSerializer.Serialize(request, AuthorizationClaimsJsonContext.Default.AuthorizationRequestClaims);
            return new CalloutAnswer.Allow("B");
        });
        await using var client = await RawClient.ConnectAsync(broker.Port);
        await client.SendAsync(Connect("alice"));
        Assert.Equal(["PONG"], (await client.PingAndCollectAsync()).Lines);

        using var json = JsonDocument.Parse(payload!);
        var nats = json.RootElement.GetProperty("nats");
        Assert.Equal("authorization_request", nats.GetProperty("type").GetString());
        Assert.Equal(2, nats.GetProperty("version").GetInt32());
        Assert.Equal(["name", "host", "id", "version"], nats.GetProperty("server_id").EnumerateObject().Select(p => p.Name));
        Assert.Equal(["host", "id", "user", "name", "kind", "type"], nats.GetProperty("client_info").EnumerateObject().Select(p => p.Name));
        Assert.Equal(["user", "pass", "name", "lang", "version", "protocol"], nats.GetProperty("connect_opts").EnumerateObject().Select(p => p.Name));
    }

    [Fact(Timeout = 30_000)]
    public async Task Refusal_with_a_reason_is_an_authorization_violation_and_the_reason_is_logged()
    {
        await using var broker = await StartAsync();
        await using var service = await CalloutService.StartAsync(broker.Url, issuer, request =>
            request.Nats.ConnectOptions.Username == "mallory" ? new CalloutAnswer.Deny("bad password") : new CalloutAnswer.Empty());

        Assert.Equal([Violation], await RefusedAsync(broker, "mallory"));
        Assert.True(broker.Logs.Contains("Auth callout service returned an error: bad password"));

        Assert.Equal([Violation], await RefusedAsync(broker, "nobody"));
        Assert.True(broker.Logs.Contains("Auth callout violation: \"no reason supplied\" on account \"AUTH\""));

        var error = await Assert.ThrowsAnyAsync<NatsException>(() => ConnectAsync(broker, "mallory"));
        Assert.Contains("Authorization Violation", error.ToString(), StringComparison.Ordinal);
    }

    [Fact(Timeout = 30_000)]
    public async Task Service_that_does_not_answer_refuses_the_client_after_the_auth_timeout()
    {
        await using var broker = await StartAsync(configure: o => o.Authorization.Timeout = TimeSpan.FromMilliseconds(600));
        await using var service = await CalloutService.StartAsync(broker.Url, issuer, _ => new CalloutAnswer.Silent());

        var watch = Stopwatch.StartNew();
        Assert.Equal([Violation], await RefusedAsync(broker, "alice"));
        Assert.InRange(watch.Elapsed, TimeSpan.FromMilliseconds(500), TimeSpan.FromSeconds(5));
        Assert.True(broker.Logs.Contains("Authorization callout response not received in time on account \"AUTH\""));
    }

    [Fact(Timeout = 30_000)]
    public async Task No_service_listening_waits_for_the_timeout_as_well()
    {
        await using var broker = await StartAsync(configure: o => o.Authorization.Timeout = TimeSpan.FromMilliseconds(400));
        var watch = Stopwatch.StartNew();
        Assert.Equal([Violation], await RefusedAsync(broker, "alice"));
        Assert.True(watch.Elapsed >= TimeSpan.FromMilliseconds(300), $"refused after {watch.Elapsed}");
    }

    public static TheoryData<string, string> BadResponses => new()
    {
        { "wrong-issuer", "Wrong issuer for auth callout response on account \"AUTH\", expected \"" },
        { "wrong-aud", "Auth callout violation: auth callout response is not for server" },
        { "wrong-user", "Auth callout violation: auth callout response is not for expected user" },
        { "wrong-user-jwt-subject", "Expected authorized user of \"" },
        { "unknown-account", "No valid account \"NOPE\" for auth callout response on account \"AUTH\": account missing" },
        { "bad-signature", "Claim failed V2 signature verification" },
        { "expired-user", "Error validating user JWT: claim is expired" },
        { "issuer-account", "Error non operator mode account \"AUTH\": attempted to use issuer_account" },
        { "outside-times", "Authorized user on account \"AUTH\" outside of valid connect times" },
    };

    [Theory(Timeout = 30_000)]
    [MemberData(nameof(BadResponses))]
    public async Task Response_that_does_not_check_out_is_refused_with_nats_servers_reason(string variant, string logged)
    {
        var other = KeyPair.CreatePair(PrefixByte.Account);
        var otherServer = KeyPair.CreatePair(PrefixByte.Server).GetPublicKey();
        var otherUser = KeyPair.CreatePair(PrefixByte.User).GetPublicKey();
        await using var broker = await StartAsync();
        CalloutAnswer Decide(AuthorizationRequestClaims request) => variant switch
        {
            "wrong-issuer" => new CalloutAnswer.Custom("B", UserSigner: other),
            "wrong-aud" => new CalloutAnswer.Custom("B", r => r.Audience = otherServer),
            "wrong-user" => new CalloutAnswer.Custom("B", r => r.Subject = otherUser),
            "wrong-user-jwt-subject" => new CalloutAnswer.Custom("B", r => r.Nats.Jwt = TestJwt.User(issuer, otherUser, c => c.Audience = "B")),
            "unknown-account" => new CalloutAnswer.Allow("NOPE"),
            "bad-signature" => new CalloutAnswer.Custom("B", r => r.Nats.Jwt = Tamper(r.Nats.Jwt!)),
            "expired-user" => new CalloutAnswer.Allow("B", c => c.Expires = DateTimeOffset.UtcNow.AddMinutes(-1).ToUnixTimeSeconds()),
            "issuer-account" => new CalloutAnswer.Allow("B", c => c.Nats.IssuerAccount = issuer.GetPublicKey()),
            "outside-times" => new CalloutAnswer.Allow("B", c =>
            {
                var later = DateTime.UtcNow.AddHours(2);
                c.Nats.Locale = "UTC";
                c.Nats.Times = [new TimeRangeClaim { Start = later.ToString("HH:00:00", System.Globalization.CultureInfo.InvariantCulture), End = later.ToString("HH:30:00", System.Globalization.CultureInfo.InvariantCulture) }];
            }),
            _ => throw new ArgumentException(variant, nameof(variant)),
        };
        await using var service = await CalloutService.StartAsync(broker.Url, issuer, Decide);

        Assert.Equal([Violation], await RefusedAsync(broker, "alice"));
        Assert.True(broker.Logs.Contains(logged), string.Join(Environment.NewLine, broker.Logs.Entries.Where(e => e.Level >= Microsoft.Extensions.Logging.LogLevel.Warning)));
    }

    // Another user JWT's payload under the first one's signature.
    private static string Tamper(string jwt)
    {
        var parts = jwt.Split('.');
        var forged = TestJwt.User(KeyPair.CreatePair(PrefixByte.Account), KeyPair.CreatePair(PrefixByte.User).GetPublicKey()).Split('.');
        return parts[0] + "." + forged[1] + "." + parts[2];
    }

    [Fact(Timeout = 30_000)]
    public async Task Xkey_seals_the_request_for_the_service_and_opens_its_sealed_response()
    {
        var curve = KeyPair.CreatePair(PrefixByte.Curve);
        await using var broker = await StartAsync(c => c.XKey = curve.GetPublicKey());
        await using var service = await CalloutService.StartAsync(broker.Url, issuer, _ => new CalloutAnswer.Allow("B"), curve: curve);
        await using var alice = await ConnectAsync(broker, "alice");
        await alice.PingAsync();

        var received = Assert.Single(service.Requests);
        Assert.True(received.Sealed);
        Assert.NotNull(received.XKeyHeader);
        Assert.True(KeyPair.IsValidPublicKey(PrefixByte.Curve, received.XKeyHeader));
        Assert.Equal(received.XKeyHeader, received.Claims.Nats.Server.XKey);
    }

    [Fact(Timeout = 30_000)]
    public async Task Xkey_accepts_a_plain_jwt_response_and_refuses_one_sealed_for_another_key()
    {
        var curve = KeyPair.CreatePair(PrefixByte.Curve);
        await using var broker = await StartAsync(c => c.XKey = curve.GetPublicKey());

        // A plain JWT answer (it starts with eyJ) is taken as it is.
        await using (var plain = await CalloutService.StartAsync(broker.Url, issuer, _ => new CalloutAnswer.Allow("B"), curve: curve, sealReplies: false))
        {
            await using var alice = await ConnectAsync(broker, "alice");
            await alice.PingAsync();
        }

        // A service whose replies are sealed with the wrong key: the broker cannot open them.
        var wrong = KeyPair.CreatePair(PrefixByte.Curve);
        await using (var service = await CalloutService.StartAsync(broker.Url, issuer, _ => new CalloutAnswer.Allow("B"), curve: curve, sealWith: wrong))
        {
            Assert.Equal([Violation], await RefusedAsync(broker, "alice"));
            Assert.True(broker.Logs.Contains("Error decrypting auth callout response on account \"AUTH\""));
        }
    }

    [Fact(Timeout = 30_000)]
    public async Task Auth_users_bypass_the_callout_and_may_not_publish_requests_in_the_callout_account()
    {
        await using var broker = await StartAsync();
        await using var service = await CalloutService.StartAsync(broker.Url, issuer, _ => new CalloutAnswer.Deny("no"));
        await using var a = await ConnectAsync(broker, "a", "a");
        await a.PingAsync();
        Assert.Empty(service.Requests);

        // An auth user with a wrong password is refused by the configuration, never asked about.
        Assert.Equal([Violation], await RefusedAsync(broker, "auth"));
        Assert.Empty(service.Requests);

        // The service's own connection (an auth user in AUTH) is denied publishing callout requests.
        await using var raw = await RawClient.ConnectAsync(broker.Port);
        await raw.SendAsync(Connect("auth", "auth") + "PUB $SYS.REQ.USER.AUTH 2\r\nhi\r\n");
        Assert.Equal(["-ERR 'Permissions Violation for Publish to \"$SYS.REQ.USER.AUTH\"'", "PONG"], (await raw.PingAndCollectAsync()).Lines);

        // A configured user that is not an auth user goes to the callout like anyone else.
        await using var other = await StartAsync(configure: o => o.Authorization.AuthCallout!.AuthUsers = ["auth"]);
        await using var otherService = await CalloutService.StartAsync(other.Url, issuer, _ => new CalloutAnswer.Deny("no"));
        Assert.Equal([Violation], await RefusedAsync(other, "a"));
        Assert.Single(otherService.Requests);
    }

    [Fact(Timeout = 30_000)]
    public async Task Permissions_of_the_user_jwt_are_enforced()
    {
        await using var broker = await StartAsync();
        await using var service = await CalloutService.StartAsync(broker.Url, issuer, _ => new CalloutAnswer.Allow("B", c =>
        {
            c.Nats.Publish = new PermissionClaim { Allow = ["b.>"] };
            c.Nats.Subscribe = new PermissionClaim { Allow = ["b.>"], Deny = ["b.secret"] };
        }));
        await using var client = await RawClient.ConnectAsync(broker.Port);
        await client.SendAsync(Connect("alice") + "SUB b.> 1\r\nSUB x.> 2\r\nSUB b.secret 3\r\nPUB b.1 2\r\nok\r\nPUB x.1 2\r\nno\r\n");
        Assert.Equal(
            [
                "-ERR 'Permissions Violation for Subscription to \"x.>\"'",
                "-ERR 'Permissions Violation for Subscription to \"b.secret\"'",
                "MSG b.1 1 2",
                "ok",
                "-ERR 'Permissions Violation for Publish to \"x.1\"'",
                "PONG",
            ],
            (await client.PingAndCollectAsync()).Lines);
    }

    [Fact(Timeout = 30_000)]
    public async Task Placement_in_the_callout_account_denies_publishing_requests()
    {
        await using var broker = await StartAsync();
        await using var service = await CalloutService.StartAsync(broker.Url, issuer, _ => new CalloutAnswer.Allow("AUTH"));
        await using var client = await RawClient.ConnectAsync(broker.Port);
        await client.SendAsync(Connect("alice") + "PUB $SYS.REQ.USER.AUTH 2\r\nhi\r\nPUB other 2\r\nok\r\n");
        Assert.Equal(["-ERR 'Permissions Violation for Publish to \"$SYS.REQ.USER.AUTH\"'", "PONG"], (await client.PingAndCollectAsync()).Lines);
    }

    [Fact(Timeout = 30_000)]
    public async Task User_jwt_expiry_closes_the_connection()
    {
        await using var broker = await StartAsync();
        await using var service = await CalloutService.StartAsync(broker.Url, issuer, _ => new CalloutAnswer.Allow("B", c => c.Expires = DateTimeOffset.UtcNow.AddSeconds(2).ToUnixTimeSeconds()));
        await using var client = await RawClient.ConnectAsync(broker.Port);
        await client.SendAsync(Connect("alice"));
        Assert.Equal(["PONG"], (await client.PingAndCollectAsync()).Lines);
        Assert.Equal(["-ERR 'User Authentication Expired'"], (await client.ExpectClosedAsync(TimeSpan.FromSeconds(10))).Where(line => line != "PING"));
    }

    [Fact(Timeout = 60_000)]
    public async Task Many_connects_await_the_service_while_other_clients_keep_working()
    {
        const int Connects = 100;
        await using var broker = await StartAsync();
        await using var service = await CalloutService.StartAsync(broker.Url, issuer, _ => new CalloutAnswer.Allow("B"), delay: TimeSpan.FromSeconds(1));
        await using var a = await ConnectAsync(broker, "a", "a");
        await using var echo = await a.SubscribeCoreAsync<string>("echo");
        var responder = Task.Run(async () =>
        {
            await foreach (var message in echo.Msgs.ReadAllAsync())
            {
                await message.ReplyAsync(message.Data);
            }
        });
        await a.PingAsync();

        var clients = new List<RawClient>();
        try
        {
            for (var i = 0; i < Connects; i++)
            {
                var client = await RawClient.ConnectAsync(broker.Port);
                clients.Add(client);
                await client.SendAsync(Connect("user" + i) + "PING\r\n");
            }

            // While every CONNECT waits for its answer, an existing client's requests go round at once.
            await Eventually.TrueAsync(() => service.Requests.Count == Connects, TimeSpan.FromSeconds(10));
            await using var requester = await ConnectAsync(broker, "a", "a");
            for (var i = 0; i < 20; i++)
            {
                var watch = Stopwatch.StartNew();
                var reply = await requester.RequestAsync<string, string>("echo", "ping" + i);
                Assert.Equal("ping" + i, reply.Data);
                Assert.True(watch.Elapsed < TimeSpan.FromMilliseconds(500), $"request {i} took {watch.Elapsed}");
            }

            // Then each gets its PONG, all within about the service's one second.
            var pongs = await Task.WhenAll(clients.Select(c => c.CollectUntilAsync("PONG", TimeSpan.FromSeconds(20))));
            Assert.All(pongs, t => Assert.Equal(["PONG"], t.Lines));
        }
        finally
        {
            foreach (var client in clients)
            {
                await client.DisposeAsync();
            }
        }
    }

    [Fact(Timeout = 30_000)]
    public async Task Mqtt_clients_authenticate_as_configured_and_never_ask_the_callout()
    {
        var settings = new Dictionary<string, string?> { ["Plugins:Mqtt:host"] = "127.0.0.1", ["Plugins:Mqtt:port"] = "-1" };
        await using var broker = await TestBroker.StartAsync(
            o => Configure(o, c => c.AuthUsers = ["auth"]),
            [new Broker.Adapters.Mqtt.MqttPlugin()],
            new ConfigurationBuilder().AddInMemoryCollection(settings).Build());
        await using var service = await CalloutService.StartAsync(broker.Url, issuer, _ => new CalloutAnswer.Allow("B"));
        var port = ((System.Net.IPEndPoint)broker.Server.GetEndPoint(Broker.Adapters.Mqtt.MqttPlugin.ListenerName)).Port;

        // A configured user that is not an auth user: a NATS client of it goes to the callout, an MQTT client does not.
        using (var client = new MQTTnet.MqttClientFactory().CreateMqttClient())
        {
            var result = await client.ConnectAsync(MqttOptions(port, "a", "a"));
            Assert.Equal(MQTTnet.MqttClientConnectResultCode.Success, result.ResultCode);
        }

        // A user only the service knows cannot connect over MQTT.
        using (var client = new MQTTnet.MqttClientFactory().CreateMqttClient())
        {
            var refused = await client.ConnectAsync(MqttOptions(port, "alice", "secret"));
            Assert.Equal(MQTTnet.MqttClientConnectResultCode.BadUserNameOrPassword, refused.ResultCode);
        }

        Assert.Empty(service.Requests);
    }

    private static MQTTnet.MqttClientOptions MqttOptions(int port, string user, string password) =>
        new MQTTnet.MqttClientOptionsBuilder().WithTcpServer("127.0.0.1", port).WithClientId(user + Guid.NewGuid().ToString("N")[..8])
            .WithCleanSession(true).WithCredentials(user, password).WithTimeout(TimeSpan.FromSeconds(10)).Build();

    [Fact(Timeout = 30_000)]
    public async Task Reload_refuses_to_change_the_callout_and_keeps_callout_clients()
    {
        await using var broker = await StartAsync();
        await using var service = await CalloutService.StartAsync(broker.Url, issuer, _ => new CalloutAnswer.Allow("B"));
        await using var client = await RawClient.ConnectAsync(broker.Port);
        await client.SendAsync(Connect("alice"));
        Assert.Equal(["PONG"], (await client.PingAndCollectAsync()).Lines);

        var changed = new BrokerOptions { Host = "127.0.0.1", Port = broker.Port };
        Configure(changed, c => c.AuthUsers = ["auth"]);
        var refused = await broker.Server.ReloadAsync(changed);
        Assert.False(refused.Succeeded);
        Assert.Contains("AuthCallout", refused.Error, StringComparison.Ordinal);

        // A reload of something else (a user added to A) leaves the callout client connected.
        var other = new BrokerOptions { Host = "127.0.0.1", Port = broker.Port };
        Configure(other, configure: o => o.Accounts.Single(a => a.Name == "A").Users.Add(AccountIsolationTests.User("a3")));
        Assert.True((await broker.Server.ReloadAsync(other)).Succeeded);
        Assert.Equal(["PONG"], (await client.PingAndCollectAsync()).Lines);
    }
}
