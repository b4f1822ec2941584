using System.Globalization;
using System.Net;
using System.Text;
using System.Text.Json;
using Broker.Core;
using Broker.Core.Auth;
using Broker.TestKit;
using NATS.Client.Core;

namespace Broker.Monitoring.Tests;

/// <summary>
/// The system account on our broker and on nats-server 2.9.10 side by side: account A with user a, the system
/// account SYS with user sys. The <c>$SYS.REQ</c> answers (envelope, <c>server</c>, the page's keys), the event filter,
/// CONNECT/DISCONNECT events, STATSZ, isolation from other accounts, and the accounts /accountz lists.
/// </summary>
public sealed class SystemAccountTests
{
    private const string ServerName = "sys-test";

    private const string ReferenceConfig = $$"""
        server_name: {{ServerName}}
        accounts {
          A: { users: [{user: a, password: a}] }
          SYS: { users: [{user: sys, password: sys}] }
        }
        system_account: SYS
        """;

    private static readonly TimeSpan NoReplyWait = TimeSpan.FromMilliseconds(700);

    // Keys nats-server has because of the system imports into every account (service imports, not built yet).
    private static readonly HashSet<string> ImportKeys = ["imports"];

    [Fact(Timeout = 90_000)]
    public async Task Every_request_is_answered_with_the_reference_envelope_and_page_keys()
    {
        await using var reference = await StartAsync(ServerKind.Reference);
        await using var ours = await StartAsync(ServerKind.Ours);
        await using var referenceSys = await ConnectAsync(reference, "sys");
        await using var ourSys = await ConnectAsync(ours, "sys");
        await using var referenceA = await ConnectAsync(reference, "a");
        await using var ourA = await ConnectAsync(ours, "a");
        await using var referenceSub = await referenceA.SubscribeCoreAsync<string>("foo");
        await using var ourSub = await ourA.SubscribeCoreAsync<string>("foo");
        await referenceA.PublishAsync("foo", "hi");
        await ourA.PublishAsync("foo", "hi");
        await referenceSub.NextAsync();
        await ourSub.NextAsync();

        var subjects = new List<string> { "$SYS.REQ.SERVER.PING" };
        subjects.AddRange(new[] { "VARZ", "SUBSZ", "CONNZ", "ROUTEZ", "GATEWAYZ", "LEAFZ", "ACCOUNTZ", "JSZ", "HEALTHZ", "STATSZ" }.Select(p => "$SYS.REQ.SERVER.PING." + p));
        subjects.AddRange(new[] { "SUBSZ", "CONNZ", "LEAFZ", "JSZ", "INFO", "STATZ", "CONNS" }.Select(p => "$SYS.REQ.ACCOUNT.A." + p));
        subjects.Add("$SYS.REQ.ACCOUNT.PING.STATZ");
        foreach (var subject in subjects)
        {
            var expected = await RequestAsync(referenceSys, subject);
            var actual = await RequestAsync(ourSys, subject);
            AssertSameKeys(subject, expected, actual, depth: 0);
        }

        // The server's own subject: its id from INFO.
        var referenceId = (await RequestAsync(referenceSys, "$SYS.REQ.SERVER.PING.VARZ")).GetProperty("server").GetProperty("id").GetString();
        var ourId = ourSys.ServerInfo!.Id;
        AssertSameKeys("VARZ by id", await RequestAsync(referenceSys, $"$SYS.REQ.SERVER.{referenceId}.VARZ"), await RequestAsync(ourSys, $"$SYS.REQ.SERVER.{ourId}.VARZ"), depth: 0);

        // Options in the body: the account's connections with their subscriptions; a bad body is a 400 in the envelope.
        var connz = await RequestAsync(ourSys, "$SYS.REQ.ACCOUNT.A.CONNZ", """{"subscriptions":true}""");
        var connection = Assert.Single(connz.GetProperty("data").GetProperty("connections").EnumerateArray());
        Assert.Contains("foo", connection.GetProperty("subscriptions_list").EnumerateArray().Select(s => s.GetString()));
        foreach (var sys in new[] { referenceSys, ourSys })
        {
            var bad = await RequestAsync(sys, "$SYS.REQ.SERVER.PING.CONNZ", "not json");
            Assert.Equal(400, bad.GetProperty("error").GetProperty("code").GetInt32());
            Assert.False(bad.TryGetProperty("data", out _));
        }
    }

    [Theory(Timeout = 60_000)]
    [InlineData(ServerKind.Ours)]
    [InlineData(ServerKind.Reference)]
    public async Task The_reply_names_the_server_and_carries_the_page(ServerKind kind)
    {
        await using var server = await StartAsync(kind);
        await using var sys = await ConnectAsync(server, "sys");
        var varz = await RequestAsync(sys, "$SYS.REQ.SERVER.PING.VARZ");
        var info = varz.GetProperty("server");
        Assert.Equal(ServerName, info.GetProperty("name").GetString());
        Assert.Equal(sys.ServerInfo!.Id, info.GetProperty("id").GetString());
        Assert.Equal("127.0.0.1", info.GetProperty("host").GetString());
        Assert.False(info.GetProperty("jetstream").GetBoolean());
        Assert.True(info.GetProperty("seq").GetInt64() > 0);
        Assert.Equal(sys.ServerInfo.Id, varz.GetProperty("data").GetProperty("server_id").GetString());
        Assert.Equal("SYS", varz.GetProperty("data").GetProperty("system_account").GetString());

        var accountz = (await RequestAsync(sys, "$SYS.REQ.SERVER.PING.ACCOUNTZ")).GetProperty("data");
        Assert.Equal("SYS", accountz.GetProperty("system_account").GetString());
        Assert.Equal(["$G", "A", "SYS"], accountz.GetProperty("accounts").EnumerateArray().Select(a => a.GetString()).Order(StringComparer.Ordinal));
        var detail = (await RequestAsync(sys, "$SYS.REQ.SERVER.PING.ACCOUNTZ", """{"account":"SYS"}""")).GetProperty("data").GetProperty("account_detail");
        Assert.True(detail.GetProperty("is_system").GetBoolean());

        var statsz = await RequestAsync(sys, "$SYS.REQ.SERVER.PING");
        Assert.Equal(1, statsz.GetProperty("statsz").GetProperty("connections").GetInt32());
        Assert.False(statsz.TryGetProperty("data", out _));

        // A JetStream page of a server without JetStream: the server page says disabled, the account page is an error.
        Assert.True((await RequestAsync(sys, "$SYS.REQ.SERVER.PING.JSZ")).GetProperty("data").GetProperty("disabled").GetBoolean());
        var accountJsz = await RequestAsync(sys, "$SYS.REQ.ACCOUNT.A.JSZ");
        Assert.Equal(500, accountJsz.GetProperty("error").GetProperty("code").GetInt32());
        Assert.Equal("jetstream not enabled", accountJsz.GetProperty("error").GetProperty("description").GetString());
        Assert.Equal(JsonValueKind.Null, accountJsz.GetProperty("data").ValueKind);
    }

    [Theory(Timeout = 60_000)]
    [InlineData(ServerKind.Ours)]
    [InlineData(ServerKind.Reference)]
    public async Task A_request_filtered_for_another_server_gets_no_reply(ServerKind kind)
    {
        await using var server = await StartAsync(kind);
        await using var sys = await ConnectAsync(server, "sys");
        foreach (var filter in new[] { """{"server_name":"other"}""", """{"cluster":"c1"}""", """{"tags":["x"]}""", """{"host":"10.9.9.9"}""" })
        {
            await Assert.ThrowsAnyAsync<NatsException>(() => RequestAsync(sys, "$SYS.REQ.SERVER.PING.VARZ", filter, NoReplyWait));
            await Assert.ThrowsAnyAsync<NatsException>(() => RequestAsync(sys, "$SYS.REQ.SERVER.PING", filter, NoReplyWait));
        }

        // A filter this server matches (a part of its name) is answered.
        var answered = await RequestAsync(sys, "$SYS.REQ.SERVER.PING.HEALTHZ", """{"server_name":"sys-"}""");
        Assert.Equal("ok", answered.GetProperty("data").GetProperty("status").GetString());

        // An account STATZ of an account without connections is not answered unless unused ones are asked for.
        await Assert.ThrowsAnyAsync<NatsException>(() => RequestAsync(sys, "$SYS.REQ.ACCOUNT.A.STATZ", "", NoReplyWait));
        var unused = await RequestAsync(sys, "$SYS.REQ.ACCOUNT.A.STATZ", """{"include_unused":true}""");
        Assert.Equal("A", Assert.Single(unused.GetProperty("data").GetProperty("account_statz").EnumerateArray()).GetProperty("acc").GetString());
    }

    [Theory(Timeout = 60_000)]
    [InlineData(ServerKind.Ours)]
    [InlineData(ServerKind.Reference)]
    public async Task A_client_of_A_coming_and_going_is_announced_to_the_system_account_only(ServerKind kind)
    {
        await using var server = await StartAsync(kind);
        await using var sys = await ConnectAsync(server, "sys");
        await using var watcherInA = await ConnectAsync(server, "a");
        await using var events = await sys.SubscribeCoreAsync<byte[]>("$SYS.ACCOUNT.A.>");
        await using var inA = await watcherInA.SubscribeCoreAsync<byte[]>("$SYS.>");
        await sys.PingAsync();
        await watcherInA.PingAsync();

        await using (var client = await NatsClients.ConnectAsync(server.Url, "comer", o => o.WithUser("a", "a")))
        {
            await client.PublishAsync("foo", "12345");
            await client.PingAsync();
        }

        // Every event of the account until the disconnect (nats-server sends the account's CONNS before or after it).
        var seen = new List<NatsMsg<byte[]>>();
        while (!seen.Any(m => m.Subject.EndsWith(".DISCONNECT", StringComparison.Ordinal))
            || seen.Count(m => m.Subject == "$SYS.ACCOUNT.A.SERVER.CONNS") < 2)
        {
            seen.Add(await events.NextAsync());
        }

        var connect = seen.First(m => m.Subject.EndsWith(".CONNECT", StringComparison.Ordinal));
        Assert.Equal("$SYS.ACCOUNT.A.CONNECT", connect.Subject);
        var body = Parse(connect.Data);
        Assert.Equal("io.nats.server.advisory.v1.client_connect", body.GetProperty("type").GetString());
        Assert.Equal(["client", "id", "server", "timestamp", "type"], Keys(body));
        var client1 = body.GetProperty("client");
        Assert.Equal("A", client1.GetProperty("acc").GetString());
        Assert.Equal("a", client1.GetProperty("user").GetString());
        Assert.Equal("comer", client1.GetProperty("name").GetString());
        Assert.Equal("Client", client1.GetProperty("kind").GetString());
        Assert.Equal("nats", client1.GetProperty("client_type").GetString());
        Assert.Equal(new[] { "acc", "host", "id", "kind", "lang", "name", "start", "user", "ver", "client_type" }.Order(StringComparer.Ordinal), Keys(client1));

        var disconnect = seen.First(m => m.Subject.EndsWith(".DISCONNECT", StringComparison.Ordinal));
        var gone = Parse(disconnect.Data);
        Assert.Equal("io.nats.server.advisory.v1.client_disconnect", gone.GetProperty("type").GetString());
        Assert.Equal(["client", "id", "reason", "received", "sent", "server", "timestamp", "type"], Keys(gone));
        Assert.Equal("Client Closed", gone.GetProperty("reason").GetString());
        Assert.Equal(1, gone.GetProperty("sent").GetProperty("msgs").GetInt64());
        Assert.Equal(5, gone.GetProperty("sent").GetProperty("bytes").GetInt64());
        Assert.Contains("stop", Keys(gone.GetProperty("client")));
        Assert.Equal(client1.GetProperty("id").GetUInt64(), gone.GetProperty("client").GetProperty("id").GetUInt64());

        // The account's connections after the connect and after the disconnect.
        var conns = seen.Where(m => m.Subject == "$SYS.ACCOUNT.A.SERVER.CONNS").Select(m => Parse(m.Data)).ToList();
        Assert.All(conns, c => Assert.Equal("io.nats.server.advisory.v1.account_connections", c.GetProperty("type").GetString()));
        Assert.All(conns, c => Assert.Equal(
            ["acc", "conns", "id", "leafnodes", "received", "sent", "server", "slow_consumers", "timestamp", "total_conns", "type"], Keys(c)));
        Assert.Equal([2, 1], conns.Select(c => c.GetProperty("conns").GetInt32()));

        // The account's own client subscribed to $SYS.> in A saw none of it.
        await Task.Delay(200);
        Assert.True(inA.IsEmpty());
    }

    [Theory(Timeout = 60_000)]
    [InlineData(ServerKind.Ours)]
    [InlineData(ServerKind.Reference)]
    public async Task A_failed_authentication_is_announced_with_the_user_it_gave(ServerKind kind)
    {
        await using var server = await StartAsync(kind);
        server.Ours?.ExpectErrors();
        await using var sys = await ConnectAsync(server, "sys");
        await using var errors = await sys.SubscribeCoreAsync<byte[]>("$SYS.SERVER.*.CLIENT.AUTH.ERR");
        await sys.PingAsync();

        await using (var stranger = await server.ConnectAsync())
        {
            await stranger.SendAsync("CONNECT {\"verbose\":false,\"user\":\"x\",\"pass\":\"y\",\"name\":\"stranger\"}\r\n");
            Assert.Contains("-ERR 'Authorization Violation'", await stranger.ExpectClosedAsync());
        }

        var message = await errors.NextAsync();
        Assert.Equal($"$SYS.SERVER.{sys.ServerInfo!.Id}.CLIENT.AUTH.ERR", message.Subject);
        var body = Parse(message.Data);
        Assert.Equal("io.nats.server.advisory.v1.client_disconnect", body.GetProperty("type").GetString());
        Assert.Equal(["client", "id", "reason", "received", "sent", "server", "timestamp", "type"], Keys(body));
        Assert.Equal("Authentication Failure", body.GetProperty("reason").GetString());
        var client = body.GetProperty("client");
        Assert.Equal("x", client.GetProperty("user").GetString());
        Assert.Equal("$G", client.GetProperty("acc").GetString());

        // rtt is there only once measured (Go's omitempty): nats-server has measured it by then, we may not have.
        Assert.Equal(new[] { "acc", "host", "id", "kind", "name", "start", "stop", "user", "client_type" }.Order(StringComparer.Ordinal), Keys(client).Where(k => k != "rtt"));
    }

    // Ours only: the test kit kills nats-server. Sent SIGTERM, nats-server 2.9.10 publishes the same server object
    // (name, host, id, ver, seq, jetstream, time) on $SYS.SERVER.<id>.SHUTDOWN before it closes the connections.
    [Fact(Timeout = 60_000)]
    public async Task Shutdown_is_announced_before_the_connections_close()
    {
        var server = await StartAsync(ServerKind.Ours);
        await using var sys = await ConnectAsync(server, "sys");
        await using var shutdown = await sys.SubscribeCoreAsync<byte[]>("$SYS.SERVER.*.SHUTDOWN");
        await sys.PingAsync();
        var id = sys.ServerInfo!.Id;
        var stopping = server.DisposeAsync().AsTask();
        var message = await shutdown.NextAsync();
        await stopping;
        Assert.Equal($"$SYS.SERVER.{id}.SHUTDOWN", message.Subject);
        var body = Parse(message.Data);
        Assert.Equal(["host", "id", "jetstream", "name", "seq", "time", "ver"], Keys(body));
        Assert.Equal(id, body.GetProperty("id").GetString());
    }

    [Theory(Timeout = 60_000)]
    [InlineData(ServerKind.Ours)]
    [InlineData(ServerKind.Reference)]
    public async Task Requests_from_another_account_reach_no_system_service(ServerKind kind)
    {
        await using var server = await StartAsync(kind);
        await using var inA = await ConnectAsync(server, "a");

        // nats-server imports $SYS.REQ.SERVER.PING.CONNZ into every account (not built yet here): ask anything else.
        await Assert.ThrowsAnyAsync<NatsException>(() => RequestAsync(inA, "$SYS.REQ.SERVER.PING.VARZ", "", NoReplyWait));
        await Assert.ThrowsAnyAsync<NatsException>(() => RequestAsync(inA, "$SYS.REQ.ACCOUNT.A.INFO", "", NoReplyWait));
    }

    [Theory(Timeout = 60_000)]
    [InlineData(ServerKind.Ours)]
    [InlineData(ServerKind.Reference)]
    public async Task Statsz_is_published_within_the_first_seconds(ServerKind kind)
    {
        await using var server = await StartAsync(kind);
        await using var sys = await ConnectAsync(server, "sys");
        await using var statsz = await sys.SubscribeCoreAsync<byte[]>("$SYS.SERVER.*.STATSZ");
        var first = await statsz.NextAsync(TimeSpan.FromSeconds(2.5));
        Assert.Equal($"$SYS.SERVER.{sys.ServerInfo!.Id}.STATSZ", first.Subject);
        var body = Parse(first.Data);
        Assert.Equal(["server", "statsz"], Keys(body));
        Assert.Equal(
            ["active_accounts", "active_servers", "connections", "cores", "cpu", "mem", "received", "sent", "slow_consumers", "start", "subscriptions", "total_connections"],
            Keys(body.GetProperty("statsz")));
    }

    [Theory(Timeout = 60_000)]
    [InlineData(ServerKind.Ours)]
    [InlineData(ServerKind.Reference)]
    public async Task With_only_the_global_and_a_configured_system_account_anonymous_clients_keep_working(ServerKind kind)
    {
        const string config = """
            accounts { SYS: { users: [{user: sys, password: sys}] } }
            system_account: SYS
            """;
        await using var server = await ServerUnderTest.StartAsync(kind, o =>
        {
            o.Host = "127.0.0.1";
            o.Accounts = [new AccountOptions { Name = "SYS", Users = [new UserOptions { User = "sys", Password = "sys" }] }];
            o.SystemAccount = "SYS";
        }, config);

        var transcript = await server.RunAsync("CONNECT {\"verbose\":false}\r\nSUB foo 1\r\nPUB foo 2\r\nhi\r\n");
        Assert.Equal(["MSG foo 1 2", "hi", "PONG"], transcript.Lines);

        await using var anonymous = await NatsClients.ConnectAsync(server.Url, "anonymous");
        await using var sys = await NatsClients.ConnectAsync(server.Url, "sys", o => o.WithUser("sys", "sys"));
        var connz = await RequestAsync(sys, "$SYS.REQ.SERVER.PING.CONNZ", """{"auth":true}""");
        var user = connz.GetProperty("data").GetProperty("connections").EnumerateArray()
            .Single(c => c.TryGetProperty("name", out var n) && n.GetString() == "anonymous").GetProperty("authorized_user").GetString();
        Assert.Matches("^nats-[0-9a-zA-Z]{8}$", user);

        // A user that is not configured is still refused.
        await Assert.ThrowsAnyAsync<NatsException>(() => NatsClients.ConnectAsync(server.Url, "stranger", o => o.WithUser("x", "y")));
        server.Ours?.ExpectErrors();
    }

    [Theory(Timeout = 60_000)]
    [InlineData(ServerKind.Ours, true)]
    [InlineData(ServerKind.Ours, false)]
    [InlineData(ServerKind.Reference, true)]
    [InlineData(ServerKind.Reference, false)]
    public async Task Accountz_lists_the_default_system_account_unless_there_is_none(ServerKind kind, bool noSystemAccount)
    {
        var config = noSystemAccount ? "no_system_account: true" : "";
        string json;
        if (kind == ServerKind.Ours)
        {
            await using var broker = await MonitoredBroker.StartAsync(o => o.NoSystemAccount = noSystemAccount);
            json = (await broker.GetJsonAsync("/accountz")).GetRawText() + (await broker.GetJsonAsync("/varz")).GetRawText();
        }
        else
        {
            var port = Ports.GetFreePort();
            await using var reference = await ReferenceServer.StartAsync(config, "-m", port.ToString(CultureInfo.InvariantCulture));
            await Ports.WaitUntilListeningAsync(port, TimeSpan.FromSeconds(10));
            using var http = new HttpClient { BaseAddress = new Uri($"http://127.0.0.1:{port}"), Timeout = TimeSpan.FromSeconds(10) };
            json = await http.GetStringAsync(new Uri("/accountz", UriKind.Relative)) + await http.GetStringAsync(new Uri("/varz", UriKind.Relative));
        }

        var accountz = JsonDocument.Parse(json[..(json.IndexOf("}{", StringComparison.Ordinal) + 1)]).RootElement;
        var varz = JsonDocument.Parse(json[(json.IndexOf("}{", StringComparison.Ordinal) + 1)..]).RootElement;
        var accounts = accountz.GetProperty("accounts").EnumerateArray().Select(a => a.GetString()).Order(StringComparer.Ordinal);
        if (noSystemAccount)
        {
            Assert.Equal(["$G"], accounts);
            Assert.False(accountz.TryGetProperty("system_account", out _));
            Assert.False(varz.TryGetProperty("system_account", out _));
        }
        else
        {
            Assert.Equal(["$G", "$SYS"], accounts);
            Assert.Equal("$SYS", accountz.GetProperty("system_account").GetString());
            Assert.Equal("$SYS", varz.GetProperty("system_account").GetString());
        }
    }

    private static Task<ServerUnderTest> StartAsync(ServerKind kind) => ServerUnderTest.StartAsync(kind, o =>
    {
        o.Host = "127.0.0.1";
        o.ServerName = ServerName;
        o.Accounts =
        [
            new AccountOptions { Name = "A", Users = [new UserOptions { User = "a", Password = "a" }] },
            new AccountOptions { Name = "SYS", Users = [new UserOptions { User = "sys", Password = "sys" }] },
        ];
        o.SystemAccount = "SYS";
    }, ReferenceConfig);

    private static Task<NatsConnection> ConnectAsync(ServerUnderTest server, string user)
        => NatsClients.ConnectAsync(server.Url, user, o => o.WithUser(user, user));

    private static async Task<JsonElement> RequestAsync(NatsConnection connection, string subject, string body = "", TimeSpan? timeout = null)
    {
        var reply = await connection.RequestAsync<byte[], byte[]>(
            subject,
            Encoding.UTF8.GetBytes(body),
            replyOpts: new NatsSubOpts { Timeout = timeout ?? NatsClients.Timeout });
        Assert.True(reply.Data is { Length: > 0 }, $"{subject}: empty reply ({reply.Headers?.Code})");
        return Parse(reply.Data);
    }

    private static JsonElement Parse(byte[]? data)
    {
        using var document = JsonDocument.Parse(data ?? []);
        return document.RootElement.Clone();
    }

    private static IEnumerable<string> Keys(JsonElement element) => element.EnumerateObject().Select(p => p.Name).Order(StringComparer.Ordinal);

    /// <summary>
    /// The envelope, <c>server</c> and the page's top level have the reference's keys (both ways, except the system
    /// imports' <c>imports</c>) with the same kinds; nested pages are compared at their top level only.
    /// </summary>
    private static void AssertSameKeys(string path, JsonElement expected, JsonElement actual, int depth)
    {
        Assert.True(expected.ValueKind == actual.ValueKind, $"{path}: {expected.ValueKind} in nats-server, {actual.ValueKind} here");
        if (expected.ValueKind != JsonValueKind.Object || depth > 1)
        {
            return;
        }

        // /varz has fields of ours and of nats-server 2.10 beside 2.9.10's (ReferenceShapeTests compares it as a superset).
        var expectedKeys = Keys(expected).Where(k => !ImportKeys.Contains(k));
        var actualKeys = Keys(actual).Where(k => !ImportKeys.Contains(k));
        if (path.Contains("VARZ", StringComparison.Ordinal) && path.EndsWith(".data", StringComparison.Ordinal))
        {
            Assert.Empty(expectedKeys.Except(actualKeys));
        }
        else
        {
            Assert.Equal(expectedKeys, actualKeys);
        }

        foreach (var property in expected.EnumerateObject().Where(p => !ImportKeys.Contains(p.Name)))
        {
            AssertSameKeys(path + "." + property.Name, property.Value, actual.GetProperty(property.Name), depth + 1);
        }
    }
}
