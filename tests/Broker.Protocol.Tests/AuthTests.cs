namespace Broker.Protocol.Tests;

/// <summary>Authentication and permissions at the wire level, on both servers with equivalent settings.</summary>
public sealed class AuthTests
{
    private const string UsersConfig = """
        authorization {
          users = [
            { user: alice, password: secret }
            { user: bob, password: "$2a$04$7NfJUeTZq6Y46p6BCHJNyeWrCUKXSH.TJn4o.2AVFiAUyXeMiQ0F6",
              permissions: {
                publish: { allow: ["req.>", "pub.>"], deny: ["pub.secret"] }
                subscribe: { allow: ["sub.>", "work.* workers"], deny: ["sub.secret"] }
              } }
          ]
        }
        """;

    public static TheoryData<ServerKind> Servers => new() { ServerKind.Ours, ServerKind.Reference };

    private static void ConfigureUsers(Broker.Core.BrokerOptions options)
    {
        options.Authorization.Users.Add(new() { User = "alice", Password = "secret" });
        options.Authorization.Users.Add(new()
        {
            User = "bob",
            Password = "$2a$04$7NfJUeTZq6Y46p6BCHJNyeWrCUKXSH.TJn4o.2AVFiAUyXeMiQ0F6",
            Permissions = new()
            {
                Publish = new() { Allow = ["req.>", "pub.>"], Deny = ["pub.secret"] },
                Subscribe = new() { Allow = ["sub.>", "work.* workers"], Deny = ["sub.secret"] },
            },
        });
    }

    [Theory]
    [MemberData(nameof(Servers))]
    public async Task Token_is_required_when_configured(ServerKind kind)
    {
        await using var server = await ServerUnderTest.StartAsync(kind, o => o.Authorization.Token = "s3cr3t", "authorization { token: s3cr3t }");
        await using (var client = await server.ConnectAsync())
        {
            Assert.Contains("\"auth_required\":true", client.Info, StringComparison.Ordinal);
        }

        var noConnect = await server.RunAsync("PING\r\n");
        Assert.Equal(["-ERR 'Authorization Violation'"], noConnect.Lines);
        Assert.True(noConnect.Closed);

        var wrong = await server.RunAsync("CONNECT {\"auth_token\":\"nope\"}\r\n");
        Assert.Equal(["-ERR 'Authorization Violation'"], wrong.Lines);
        Assert.True(wrong.Closed);

        var right = await server.RunAsync("CONNECT {\"auth_token\":\"s3cr3t\"}\r\n");
        Assert.Equal(["+OK", "PONG"], right.Lines);
    }

    [Theory(Timeout = 60_000)]
    [MemberData(nameof(Servers))]
    public async Task Nkey_users_get_a_nonce_in_info_and_sign_it_in_connect(ServerKind kind)
    {
        using var alice = NATS.NKeys.KeyPair.CreatePair(NATS.NKeys.PrefixByte.User);
        var publicKey = alice.GetPublicKey();
        await using var server = await ServerUnderTest.StartAsync(
            kind, o => o.Authorization.Users.Add(new() { Nkey = publicKey }), "authorization { users = [ { nkey: " + publicKey + " } ] }");

        await using (var client = await server.ConnectAsync())
        {
            var info = System.Text.Json.JsonDocument.Parse(client.Info!["INFO ".Length..]).RootElement;
            Assert.True(info.GetProperty("auth_required").GetBoolean());
            var nonce = info.GetProperty("nonce").GetString()!;
            Assert.Matches("^[A-Za-z0-9_-]{15}$", nonce);

            var signature = new byte[64];
            alice.Sign(System.Text.Encoding.ASCII.GetBytes(nonce), signature);
            await client.SendAsync($"CONNECT {{\"nkey\":\"{publicKey}\",\"sig\":\"{System.Buffers.Text.Base64Url.EncodeToString(signature)}\"}}\r\n");
            Assert.Equal(["+OK", "PONG"], (await client.PingAndCollectAsync()).Lines);
        }

        // A signature of another nonce, no signature, or no key at all: Authorization Violation, and the connection closes.
        var stale = new byte[64];
        alice.Sign("an older nonce!"u8.ToArray(), stale);
        foreach (var connect in new[]
        {
            $"{{\"nkey\":\"{publicKey}\",\"sig\":\"{System.Buffers.Text.Base64Url.EncodeToString(stale)}\"}}",
            $"{{\"nkey\":\"{publicKey}\"}}",
            "{\"user\":\"alice\",\"pass\":\"x\"}",
        })
        {
            var transcript = await server.RunAsync($"CONNECT {connect}\r\n");
            Assert.Equal(["-ERR 'Authorization Violation'"], transcript.Lines);
            Assert.True(transcript.Closed);
        }
    }

    [Theory(Timeout = 60_000)]
    [MemberData(nameof(Servers))]
    public async Task Info_has_no_nonce_without_nkey_users(ServerKind kind)
    {
        await using var server = await ServerUnderTest.StartAsync(kind, ConfigureUsers, UsersConfig);
        await using var client = await server.ConnectAsync();
        Assert.DoesNotContain("\"nonce\"", client.Info, StringComparison.Ordinal);
    }

    [Theory]
    [MemberData(nameof(Servers))]
    public async Task Users_with_plain_and_bcrypt_passwords(ServerKind kind)
    {
        await using var server = await ServerUnderTest.StartAsync(kind, ConfigureUsers, UsersConfig);
        Assert.Equal(["+OK", "PONG"], (await server.RunAsync("CONNECT {\"user\":\"alice\",\"pass\":\"secret\"}\r\n")).Lines);
        Assert.Equal(["+OK", "PONG"], (await server.RunAsync("CONNECT {\"user\":\"bob\",\"pass\":\"password\"}\r\n")).Lines);

        foreach (var bad in new[] { "{\"user\":\"alice\",\"pass\":\"wrong\"}", "{\"user\":\"bob\",\"pass\":\"secret\"}", "{\"user\":\"carol\",\"pass\":\"secret\"}", "{}" })
        {
            var transcript = await server.RunAsync($"CONNECT {bad}\r\n");
            Assert.Equal(["-ERR 'Authorization Violation'"], transcript.Lines);
            Assert.True(transcript.Closed);
        }
    }

    [Theory]
    [MemberData(nameof(Servers))]
    public async Task Permission_violations_are_reported_and_the_connection_stays(ServerKind kind)
    {
        await using var server = await ServerUnderTest.StartAsync(kind, ConfigureUsers, UsersConfig);
        var transcript = await server.RunAsync(
            "CONNECT {\"user\":\"bob\",\"pass\":\"password\",\"verbose\":false}\r\n" +
            "PUB other 1\r\nx\r\n" +
            "PUB pub.secret 1\r\nx\r\n" +
            "SUB nope 1\r\n" +
            "SUB sub.secret 2\r\n" +
            "SUB work.a other 3\r\n" +
            "SUB work.a 4\r\n" +
            "SUB sub.ok 5\r\nPUB pub.ok 1\r\nx\r\n" +
            "SUB work.b workers 6\r\n");
        Assert.Equal(
            [
                "-ERR 'Permissions Violation for Publish to \"other\"'",
                "-ERR 'Permissions Violation for Publish to \"pub.secret\"'",
                "-ERR 'Permissions Violation for Subscription to \"nope\"'",
                "-ERR 'Permissions Violation for Subscription to \"sub.secret\"'",
                "-ERR 'Permissions Violation for Subscription to \"work.a\" using queue \"other\"'",
                "-ERR 'Permissions Violation for Subscription to \"work.a\"'",
                "PONG",
            ],
            transcript.Lines);
        Assert.False(transcript.Closed);
    }

    [Theory]
    [MemberData(nameof(Servers))]
    public async Task Wildcard_subscription_does_not_receive_denied_subjects(ServerKind kind)
    {
        await using var server = await ServerUnderTest.StartAsync(kind, ConfigureUsers, UsersConfig);
        await using var bob = await server.ConnectAsync();
        await bob.SendAsync("CONNECT {\"user\":\"bob\",\"pass\":\"password\",\"verbose\":false}\r\nSUB sub.* 1\r\n");
        Assert.Equal(["PONG"], (await bob.PingAndCollectAsync()).Lines);

        await server.RunAsync("CONNECT {\"user\":\"alice\",\"pass\":\"secret\",\"verbose\":false}\r\nPUB sub.secret 1\r\na\r\nPUB sub.open 1\r\nb\r\n");
        Assert.Equal(["MSG sub.open 1 1", "b", "PONG"], (await bob.PingAndCollectAsync()).Lines);
    }

    [Theory]
    [MemberData(nameof(Servers))]
    public async Task Silent_client_is_closed_after_the_auth_timeout(ServerKind kind)
    {
        await using var server = await ServerUnderTest.StartAsync(
            kind,
            o =>
            {
                o.Authorization.Token = "t";
                o.Authorization.Timeout = TimeSpan.FromMilliseconds(300);
            },
            "authorization { token: t, timeout: 0.3 }");
        await using var client = await server.ConnectAsync();
        Assert.Equal(["-ERR 'Authentication Timeout'"], await client.ExpectClosedAsync());
    }

    [Theory]
    [MemberData(nameof(Servers))]
    public async Task No_auth_user_binds_clients_without_credentials(ServerKind kind)
    {
        // bob has a plain password here: nats-server checks the no-auth user's stored password against itself, which
        // fails for a bcrypt hash; we bind without a password check (documented difference).
        await using var server = await ServerUnderTest.StartAsync(
            kind,
            o =>
            {
                o.Authorization.Users.Add(new() { User = "alice", Password = "secret" });
                o.Authorization.Users.Add(new() { User = "bob", Password = "x", Permissions = new() { Publish = new() { Allow = ["pub.>"] } } });
                o.Authorization.NoAuthUser = "bob";
            },
            """
            authorization { users = [ { user: alice, password: secret }, { user: bob, password: x, permissions: { publish: { allow: ["pub.>"] } } } ] }
            no_auth_user: bob
            """);

        // Without CONNECT at all (telnet style), and with an empty CONNECT, the client acts as bob.
        var telnet = await server.RunAsync("PUB other 1\r\nx\r\nPUB pub.ok 1\r\nx\r\n");
        Assert.Equal(["-ERR 'Permissions Violation for Publish to \"other\"'", "+OK", "PONG"], telnet.Lines);

        var empty = await server.RunAsync("CONNECT {\"verbose\":false}\r\nPUB other 1\r\nx\r\n");
        Assert.Equal(["-ERR 'Permissions Violation for Publish to \"other\"'", "PONG"], empty.Lines);

        // Explicit credentials still work and still fail.
        Assert.Equal(["+OK", "PONG"], (await server.RunAsync("CONNECT {\"user\":\"alice\",\"pass\":\"secret\"}\r\n")).Lines);
        Assert.Equal(["-ERR 'Authorization Violation'"], (await server.RunAsync("CONNECT {\"user\":\"alice\",\"pass\":\"bad\"}\r\n")).Lines);
    }
}
