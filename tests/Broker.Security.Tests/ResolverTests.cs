using System.Buffers.Text;
using System.Text;
using System.Text.Json;
using Broker.Core;
using Broker.Core.Auth;
using Broker.Core.Internal.Jwt;
using NATS.Client.Core;
using NATS.NKeys;
using static Broker.Security.Tests.OperatorModeTests;

namespace Broker.Security.Tests;

/// <summary>
/// The nats-based account resolver on one server, the same on our broker and nats-server 2.9.10: account JWTs pushed by
/// a system account user with NATS.Client.Core requests to <c>$SYS.REQ.CLAIMS.UPDATE</c>, their answers, lookups,
/// lists, deletes, live updates of connected clients (raw sockets), the directory's layout and a restart.
/// </summary>
public sealed class ResolverTests : IDisposable
{
    private readonly string directory = Directory.CreateTempSubdirectory("broker-resolver-").FullName;

    public static TheoryData<ServerKind> Servers => new() { ServerKind.Ours, ServerKind.Reference };

    public void Dispose() => Directory.Delete(directory, recursive: true);

    /// <summary>The resolver directory of one server of the test.</summary>
    private string Dir(ServerKind kind) => Path.Combine(directory, kind.ToString());

    /// <summary>Both servers in operator mode with a nats-based resolver; only the system account is preloaded.</summary>
    internal static Task<ServerUnderTest> StartResolverAsync(ServerKind kind, TestOperator op, string dir, string type = "full", bool allowDelete = false, int limit = 0)
    {
        var system = op.SystemAccount.GetPublicKey();
        var systemJwt = op.AccountJwts[system];
        return ServerUnderTest.StartAsync(
            kind,
            o =>
            {
                o.Operator.Operators.Add(op.Jwt);
                o.Operator.Resolver = type == "full" ? AccountResolverType.Full : type == "cache" ? AccountResolverType.Cache : AccountResolverType.Memory;
                o.Operator.DirectoryResolver = new DirectoryResolverOptions { Directory = dir, AllowDelete = allowDelete, Limit = limit };
                o.Operator.ResolverPreload[system] = systemJwt;
            },
            $"operator: \"{op.Jwt}\"\n"
            + (type == "memory" ? "resolver: MEMORY\n" : $"resolver: {{ type: {type}, dir: \"{dir}\"{(allowDelete ? ", allow_delete: true" : string.Empty)}{(limit > 0 ? $", limit: {limit}" : string.Empty)} }}\n")
            + $"resolver_preload: {{ {system}: \"{systemJwt}\" }}\n");
    }

    /// <summary>A NATS.Client.Core connection of a new user of the system account.</summary>
    internal static Task<NatsConnection> ConnectSystemAsync(ServerUnderTest server, TestOperator op)
    {
        var (user, jwt) = TestOperator.CreateUser(op.SystemAccount);
        return NatsClients.ConnectAsync(server.Url, "sys", o => o with { AuthOpts = new NatsAuthOpts { Jwt = jwt, Seed = user.GetSeed() } });
    }

    internal static async Task<string> RequestAsync(NatsConnection connection, string subject, string body)
    {
        var reply = await connection.RequestAsync<string, string>(subject, body, replyOpts: new NatsSubOpts { Timeout = NatsClients.Timeout });
        return reply.Data ?? string.Empty;
    }

    /// <summary>The keys of a JSON object's top level, in order.</summary>
    internal static string[] Keys(JsonElement element) => [.. element.EnumerateObject().Select(p => p.Name)];

    [Theory]
    [MemberData(nameof(Servers))]
    public async Task A_pushed_account_lets_its_users_connect(ServerKind kind)
    {
        var op = new TestOperator();
        var account = op.CreateAccount();
        var (user, userJwt) = TestOperator.CreateUser(account);
        await using var server = await StartResolverAsync(kind, op, Dir(kind));
        await using var sys = await ConnectSystemAsync(server, op);

        await using (var before = await server.ConnectAsync())
        {
            await before.SendAsync(Connect(userJwt, Sign(user, Nonce(before))) + "PING\r\n");
            Assert.Equal(["-ERR 'Authorization Violation'"], await before.ExpectClosedAsync());
        }

        var reply = await RequestAsync(sys, "$SYS.REQ.CLAIMS.UPDATE", op.AccountJwts[account.GetPublicKey()]);

        using var json = JsonDocument.Parse(reply);
        Assert.Equal(["data", "server"], Keys(json.RootElement));
        var data = json.RootElement.GetProperty("data");
        Assert.Equal(["account", "code", "message"], Keys(data));
        Assert.Equal(account.GetPublicKey(), data.GetProperty("account").GetString());
        Assert.Equal(200, data.GetProperty("code").GetInt32());
        Assert.Equal("jwt updated", data.GetProperty("message").GetString());
        Assert.Equal(["name", "host", "id", "ver", "seq", "jetstream", "time"], Keys(json.RootElement.GetProperty("server")));

        await using var client = await server.ConnectAsync();
        await client.SendAsync(Connect(userJwt, Sign(user, Nonce(client))) + "SUB a 1\r\nPUB a 2\r\nhi\r\nPING\r\n");
        Assert.Equal(["MSG a 1 2", "hi", "PONG"], (await client.CollectUntilAsync("PONG")).Lines);
    }

    [Theory]
    [MemberData(nameof(Servers))]
    public async Task Updates_are_answered_as_nats_server_answers_them(ServerKind kind)
    {
        var op = new TestOperator();
        var account = op.CreateAccount();
        var untrusted = TestJwt.NewKey(PrefixByte.Account);
        var untrustedJwt = TestJwt.Account(new TestOperator().Key, untrusted.GetPublicKey());
        var (user, userJwt) = TestOperator.CreateUser(untrusted);
        await using var server = await StartResolverAsync(kind, op, Dir(kind));
        server.Ours?.ExpectErrors();
        await using var sys = await ConnectSystemAsync(server, op);

        // nats-server stores a JWT whose signature holds without asking whether its signer is trusted: its users are
        // refused at connect time, when the account is looked up.
        Assert.Equal((200, untrusted.GetPublicKey(), "jwt updated"), Answer(await RequestAsync(sys, "$SYS.REQ.CLAIMS.UPDATE", untrustedJwt)));
        await using (var refused = await server.ConnectAsync())
        {
            await refused.SendAsync(Connect(userJwt, Sign(user, Nonce(refused))) + "PING\r\n");
            Assert.Equal(["-ERR 'Authorization Violation'"], await refused.ExpectClosedAsync());
        }

        Assert.Equal((500, "n/a", "jwt update resulted in error - expected 3 chunks"), Answer(await RequestAsync(sys, "$SYS.REQ.CLAIMS.UPDATE", "garbage")));
        var forged = op.AccountJwts[account.GetPublicKey()][..^4] + "AAAA";
        Assert.Equal((500, "n/a", "jwt update resulted in error - claim failed V2 signature verification"), Answer(await RequestAsync(sys, "$SYS.REQ.CLAIMS.UPDATE", forged)));
        Assert.Equal(
            (500, untrusted.GetPublicKey(), "jwt update resulted in error - subject does not match jwt content"),
            Answer(await RequestAsync(sys, $"$SYS.REQ.ACCOUNT.{untrusted.GetPublicKey()}.CLAIMS.UPDATE", op.AccountJwts[account.GetPublicKey()])));
        Assert.Equal(
            (200, account.GetPublicKey(), "jwt updated"),
            Answer(await RequestAsync(sys, $"$SYS.REQ.ACCOUNT.{account.GetPublicKey()}.CLAIMS.UPDATE", op.AccountJwts[account.GetPublicKey()])));
        Assert.Equal(
            (200, account.GetPublicKey(), "jwt updated"),
            Answer(await RequestAsync(sys, $"$SYS.ACCOUNT.{account.GetPublicKey()}.CLAIMS.UPDATE", op.AccountJwts[account.GetPublicKey()])));
    }

    [Theory]
    [MemberData(nameof(Servers))]
    public async Task Lookup_and_list_answer_from_the_directory(ServerKind kind)
    {
        var op = new TestOperator();
        var first = op.CreateAccount();
        var second = op.CreateAccount();
        await using var server = await StartResolverAsync(kind, op, Dir(kind));
        await using var sys = await ConnectSystemAsync(server, op);
        await RequestAsync(sys, "$SYS.REQ.CLAIMS.UPDATE", op.AccountJwts[first.GetPublicKey()]);
        await RequestAsync(sys, "$SYS.REQ.CLAIMS.UPDATE", op.AccountJwts[second.GetPublicKey()]);

        Assert.Equal(op.AccountJwts[first.GetPublicKey()], await RequestAsync(sys, $"$SYS.REQ.ACCOUNT.{first.GetPublicKey()}.CLAIMS.LOOKUP", string.Empty));

        using var list = JsonDocument.Parse(await RequestAsync(sys, "$SYS.REQ.CLAIMS.LIST", string.Empty));
        Assert.Equal(["data", "server"], Keys(list.RootElement));
        string[] expected = [op.SystemAccount.GetPublicKey(), first.GetPublicKey(), second.GetPublicKey()];
        Array.Sort(expected, StringComparer.Ordinal);
        Assert.Equal(expected, list.RootElement.GetProperty("data").EnumerateArray().Select(e => e.GetString()!).ToArray());
    }

    [Theory]
    [MemberData(nameof(Servers))]
    public async Task The_directory_holds_one_file_per_account_named_by_its_key(ServerKind kind)
    {
        var op = new TestOperator();
        var account = op.CreateAccount();
        await using (var server = await StartResolverAsync(kind, op, Dir(kind)))
        await using (var sys = await ConnectSystemAsync(server, op))
        {
            await RequestAsync(sys, "$SYS.REQ.CLAIMS.UPDATE", op.AccountJwts[account.GetPublicKey()]);
        }

        var files = Directory.GetFileSystemEntries(Dir(kind)).Select(Path.GetFileName).Order(StringComparer.Ordinal).ToArray();
        string[] expected = [op.SystemAccount.GetPublicKey() + ".jwt", account.GetPublicKey() + ".jwt"];
        Array.Sort(expected, StringComparer.Ordinal);
        Assert.Equal(expected, files);
        Assert.Equal(op.AccountJwts[account.GetPublicKey()], await File.ReadAllTextAsync(Path.Combine(Dir(kind), account.GetPublicKey() + ".jwt")));
        if (!OperatingSystem.IsWindows())
        {
            Assert.Equal(UnixFileMode.UserRead | UnixFileMode.UserWrite | UnixFileMode.GroupRead, File.GetUnixFileMode(Path.Combine(Dir(kind), account.GetPublicKey() + ".jwt")));
        }
    }

    [Theory]
    [MemberData(nameof(Servers))]
    public async Task A_restart_keeps_the_pushed_accounts(ServerKind kind)
    {
        var op = new TestOperator();
        var account = op.CreateAccount();
        var (user, userJwt) = TestOperator.CreateUser(account);
        await using (var server = await StartResolverAsync(kind, op, Dir(kind)))
        await using (var sys = await ConnectSystemAsync(server, op))
        {
            await RequestAsync(sys, "$SYS.REQ.CLAIMS.UPDATE", op.AccountJwts[account.GetPublicKey()]);
        }

        await using var restarted = await StartResolverAsync(kind, op, Dir(kind));
        await using var client = await restarted.ConnectAsync();
        await client.SendAsync(Connect(userJwt, Sign(user, Nonce(client))) + "PING\r\n");
        Assert.Equal(["PONG"], (await client.CollectUntilAsync("PONG")).Lines);
    }

    [Theory]
    [MemberData(nameof(Servers))]
    public async Task The_full_resolver_refuses_accounts_beyond_its_limit(ServerKind kind)
    {
        var op = new TestOperator();
        var first = op.CreateAccount();
        var second = op.CreateAccount();
        await using var server = await StartResolverAsync(kind, op, Dir(kind), limit: 2);
        server.Ours?.ExpectErrors();
        await using var sys = await ConnectSystemAsync(server, op);

        Assert.Equal((200, first.GetPublicKey(), "jwt updated"), Answer(await RequestAsync(sys, "$SYS.REQ.CLAIMS.UPDATE", op.AccountJwts[first.GetPublicKey()])));
        Assert.Equal(
            (500, second.GetPublicKey(), "jwt update resulted in error - jwt store is full"),
            Answer(await RequestAsync(sys, "$SYS.REQ.CLAIMS.UPDATE", op.AccountJwts[second.GetPublicKey()])));
        var updated = op.AddAccount(first, c => c.Nats.Limits.Connections = 5);
        Assert.Equal((200, first.GetPublicKey(), "jwt updated"), Answer(await RequestAsync(sys, "$SYS.REQ.CLAIMS.UPDATE", updated)));
    }

    [Theory]
    [MemberData(nameof(Servers))]
    public async Task Pack_answers_one_message_per_account_then_an_empty_one(ServerKind kind)
    {
        var op = new TestOperator();
        var account = op.CreateAccount();
        await using var server = await StartResolverAsync(kind, op, Dir(kind));
        await using var sys = await ConnectSystemAsync(server, op);
        await RequestAsync(sys, "$SYS.REQ.CLAIMS.UPDATE", op.AccountJwts[account.GetPublicKey()]);
        await using var replies = await sys.SubscribeCoreAsync<string>("pack.reply");
        await sys.PingAsync();

        await sys.PublishAsync("$SYS.REQ.CLAIMS.PACK", string.Empty, replyTo: "pack.reply");
        var messages = new List<string>();
        while (true)
        {
            var data = (await replies.NextAsync()).Data ?? string.Empty;
            if (data.Length == 0)
            {
                break;
            }

            messages.Add(data);
        }

        var expected = new[] { op.SystemAccount, account }.Select(k => k.GetPublicKey() + "|" + op.AccountJwts[k.GetPublicKey()]).Order(StringComparer.Ordinal).ToArray();
        Assert.Equal(expected, messages.ToArray());
    }

    [Theory]
    [InlineData("no-dir", "dir has no value and needs to point to a directory")]
    [InlineData("cache-delete", "CACHE does not accept allow_delete")]
    [InlineData("cache-interval", "CACHE does not accept sync")]
    [InlineData("full-ttl", "FULL does not accept ttl")]
    [InlineData("no-system-account", "using nats based account resolver - the system account needs to be specified in configuration or the operator jwt")]
    public void The_embedding_api_refuses_what_nats_server_refuses(string refusal, string expected)
    {
        var op = new TestOperator();
        var options = new BrokerOptions();
        options.Operator.Operators.Add(refusal == "no-system-account" ? TestJwt.Operator(op.Key) : op.Jwt);
        options.Operator.Resolver = refusal.StartsWith("cache", StringComparison.Ordinal) ? AccountResolverType.Cache : AccountResolverType.Full;
        options.Operator.DirectoryResolver = new DirectoryResolverOptions
        {
            Directory = refusal == "no-dir" ? null : Dir(ServerKind.Ours),
            AllowDelete = refusal == "cache-delete",
            SyncInterval = refusal == "cache-interval" ? TimeSpan.FromMinutes(1) : TimeSpan.Zero,
            Ttl = refusal == "full-ttl" ? TimeSpan.FromMinutes(1) : TimeSpan.Zero,
        };

        Assert.Equal(expected, Assert.Throws<InvalidOperationException>(options.Validate).Message);
    }

    /// <summary>The code, account and message (or description) of a <c>respondToUpdate</c> answer.</summary>
    internal static (int Code, string? Account, string Text) Answer(string reply)
    {
        using var json = JsonDocument.Parse(reply);
        var root = json.RootElement;
        if (root.TryGetProperty("data", out var data))
        {
            Assert.Equal(["data", "server"], Keys(root));
            return (data.GetProperty("code").GetInt32(), data.TryGetProperty("account", out var a) ? a.GetString() : null, data.GetProperty("message").GetString()!);
        }

        Assert.Equal(["error", "server"], Keys(root));
        var error = root.GetProperty("error");
        return (error.GetProperty("code").GetInt32(), error.TryGetProperty("account", out var account) ? account.GetString() : null, error.GetProperty("description").GetString()!);
    }

    /// <summary>A generic JWT (nats-io/jwt <c>GenericClaims</c>) self-signed by <paramref name="signer"/> with <c>nats</c> = <paramref name="nats"/>.</summary>
    internal static string GenericJwt(KeyPair signer, object nats)
    {
        var key = signer.GetPublicKey();
        var header = Base64Url.EncodeToString("""{"typ":"JWT","alg":"ed25519-nkey"}"""u8);
        var payload = Base64Url.EncodeToString(JsonSerializer.SerializeToUtf8Bytes(new Dictionary<string, object>
        {
            ["jti"] = Guid.NewGuid().ToString("N"),
            ["iat"] = DateTimeOffset.UtcNow.ToUnixTimeSeconds(),
            ["iss"] = key,
            ["sub"] = key,
            ["nats"] = nats,
        }));
        var signature = new byte[64];
        signer.Sign(Encoding.ASCII.GetBytes(header + "." + payload), signature);
        return header + "." + payload + "." + Base64Url.EncodeToString(signature);
    }
}
