using System.Net;
using System.Text.Json;
using Broker.Core.Auth;

namespace Broker.Monitoring.Tests;

/// <summary>/connz: what each connection sent and received, its CONNECT details, filters, sorting and paging.</summary>
public sealed class ConnzTests
{
    [Fact(Timeout = 30_000)]
    public async Task Shows_each_connection_with_its_connect_details_and_counters()
    {
        await using var broker = await MonitoredBroker.StartAsync();
        await using var alice = await broker.ConnectAsync("{\"verbose\":false,\"name\":\"alice\",\"lang\":\"go\",\"version\":\"1.2.3\",\"protocol\":1}");
        await using var bob = await broker.ConnectAsync("{\"verbose\":false,\"name\":\"bob\"}");
        await alice.SendAsync("SUB foo 1\r\nSUB bar q 2\r\n");
        await alice.PingAndCollectAsync();
        await bob.SendAsync("PUB foo 5\r\nhello\r\n");
        await bob.PingAndCollectAsync();
        await alice.PingAndCollectAsync();

        var connz = await broker.GetJsonAsync("/connz");
        Assert.Equal(broker.Server.ServerId, connz.GetProperty("server_id").GetString());
        Assert.Equal(2, connz.GetProperty("num_connections").GetInt32());
        Assert.Equal(2, connz.GetProperty("total").GetInt32());
        Assert.Equal(0, connz.GetProperty("offset").GetInt32());
        Assert.Equal(1024, connz.GetProperty("limit").GetInt32());

        var connections = connz.GetProperty("connections").EnumerateArray().ToList();
        var a = connections[0];
        var b = connections[1];
        Assert.True(a.GetProperty("cid").GetUInt64() < b.GetProperty("cid").GetUInt64());
        Assert.Equal("alice", a.GetProperty("name").GetString());
        Assert.Equal("go", a.GetProperty("lang").GetString());
        Assert.Equal("1.2.3", a.GetProperty("version").GetString());
        Assert.Equal("Client", a.GetProperty("kind").GetString());
        Assert.Equal("nats", a.GetProperty("type").GetString());
        Assert.Equal("127.0.0.1", a.GetProperty("ip").GetString());
        Assert.True(a.GetProperty("port").GetInt32() > 0);
        Assert.Equal(2, a.GetProperty("subscriptions").GetInt32());
        Assert.Equal(1, a.GetProperty("out_msgs").GetInt64());
        Assert.Equal(5, a.GetProperty("out_bytes").GetInt64());
        Assert.Equal(0, a.GetProperty("in_msgs").GetInt64());
        Assert.Equal(0, a.GetProperty("pending_bytes").GetInt64());
        Assert.Equal("bob", b.GetProperty("name").GetString());
        Assert.False(b.TryGetProperty("lang", out _));
        Assert.Equal(1, b.GetProperty("in_msgs").GetInt64());
        Assert.Equal(5, b.GetProperty("in_bytes").GetInt64());
        foreach (var field in new[] { "start", "last_activity", "rtt", "uptime", "idle" })
        {
            Assert.Equal(JsonValueKind.String, a.GetProperty(field).ValueKind);
        }

        Assert.False(a.TryGetProperty("stop", out _));
        Assert.False(a.TryGetProperty("subscriptions_list", out _));
    }

    [Fact(Timeout = 30_000)]
    public async Task Lists_subscriptions_as_subjects_or_in_detail()
    {
        await using var broker = await MonitoredBroker.StartAsync();
        await using var client = await broker.ConnectAsync();
        await using var publisher = await broker.ConnectAsync();
        await client.SendAsync("SUB foo 1\r\nSUB bar q 2\r\nUNSUB 2 10\r\n");
        await client.PingAndCollectAsync();
        await publisher.SendAsync("PUB foo 1\r\nx\r\nPUB foo 1\r\ny\r\n");
        await publisher.PingAndCollectAsync();
        await client.CollectUntilAsync("y");

        var connz = await broker.GetJsonAsync("/connz?subs=1&sort=subs");
        var subjects = connz.GetProperty("connections")[0].GetProperty("subscriptions_list").EnumerateArray().Select(s => s.GetString()).Order().ToList();
        Assert.Equal(["bar", "foo"], subjects);

        connz = await broker.GetJsonAsync("/connz?subs=detail&sort=subs");
        var details = connz.GetProperty("connections")[0].GetProperty("subscriptions_list_detail").EnumerateArray().ToList();
        var foo = details.Single(d => d.GetProperty("subject").GetString() == "foo");
        var bar = details.Single(d => d.GetProperty("subject").GetString() == "bar");
        Assert.Equal("1", foo.GetProperty("sid").GetString());
        Assert.Equal(2, foo.GetProperty("msgs").GetInt64());
        Assert.False(foo.TryGetProperty("qgroup", out _));
        Assert.False(foo.TryGetProperty("max", out _));
        Assert.False(foo.TryGetProperty("account", out _));
        Assert.Equal("q", bar.GetProperty("qgroup").GetString());
        Assert.Equal(10, bar.GetProperty("max").GetInt64());
        Assert.Equal(connz.GetProperty("connections")[0].GetProperty("cid").GetUInt64(), bar.GetProperty("cid").GetUInt64());

        // The publisher has none: no list at all, as nats-server omits empty lists.
        Assert.False(connz.GetProperty("connections")[1].TryGetProperty("subscriptions_list_detail", out _));
    }

    [Fact(Timeout = 30_000)]
    public async Task Sorts_pages_and_filters_by_cid()
    {
        await using var broker = await MonitoredBroker.StartAsync();
        var clients = new List<Broker.TestKit.RawClient>();
        try
        {
            for (var i = 0; i < 4; i++)
            {
                var client = await broker.ConnectAsync($"{{\"verbose\":false,\"name\":\"c{i}\"}}");
                clients.Add(client);

                // Client i publishes i messages, so msgs_from orders them in reverse.
                await client.SendAsync(string.Concat(Enumerable.Repeat("PUB x 1\r\na\r\n", i)));
                await client.PingAndCollectAsync();
            }

            var names = await NamesAsync(broker, "/connz");
            Assert.Equal(["c0", "c1", "c2", "c3"], names);
            Assert.Equal(["c3", "c2", "c1", "c0"], await NamesAsync(broker, "/connz?sort=msgs_from"));
            Assert.Equal(["c3", "c2", "c1", "c0"], await NamesAsync(broker, "/connz?sort=bytes_from"));
            Assert.Equal(["c2", "c1"], await NamesAsync(broker, "/connz?sort=msgs_from&offset=1&limit=2"));
            Assert.Empty(await NamesAsync(broker, "/connz?offset=10"));

            var paged = await broker.GetJsonAsync("/connz?offset=1&limit=2");
            Assert.Equal(2, paged.GetProperty("num_connections").GetInt32());
            Assert.Equal(4, paged.GetProperty("total").GetInt32());
            Assert.Equal(1, paged.GetProperty("offset").GetInt32());
            Assert.Equal(2, paged.GetProperty("limit").GetInt32());

            var all = await broker.GetJsonAsync("/connz");
            var third = all.GetProperty("connections")[2].GetProperty("cid").GetUInt64();
            var byCid = await broker.GetJsonAsync($"/connz?cid={third}");
            Assert.Equal(1, byCid.GetProperty("limit").GetInt32());
            Assert.Equal(["c2"], byCid.GetProperty("connections").EnumerateArray().Select(c => c.GetProperty("name").GetString()));

            foreach (var sort in new[] { "cid", "start", "subs", "pending", "msgs_to", "bytes_to", "last", "idle", "uptime", "rtt" })
            {
                Assert.Equal(4, (await broker.GetJsonAsync("/connz?sort=" + sort)).GetProperty("num_connections").GetInt32());
            }
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
    public async Task Remembers_closed_connections_with_final_counters_and_reason()
    {
        await using var broker = await MonitoredBroker.StartAsync();
        await using var stays = await broker.ConnectAsync("{\"verbose\":false,\"name\":\"stays\"}");
        var leaves = await broker.ConnectAsync("{\"verbose\":false,\"name\":\"leaves\"}");
        await leaves.SendAsync("SUB foo 7\r\nPUB foo 2\r\nhi\r\n");
        await leaves.PingAndCollectAsync();
        await leaves.DisposeAsync();

        await Eventually.AssertAsync(
            async () => (await broker.GetJsonAsync("/connz?state=closed")).GetProperty("num_connections").GetInt32() == 1,
            "the closed connection to be recorded");
        var closed = (await broker.GetJsonAsync("/connz?state=closed&subs=detail")).GetProperty("connections")[0];
        Assert.Equal("leaves", closed.GetProperty("name").GetString());
        Assert.Equal("Client Closed", closed.GetProperty("reason").GetString());
        Assert.Equal(JsonValueKind.String, closed.GetProperty("stop").ValueKind);
        Assert.Equal(1, closed.GetProperty("in_msgs").GetInt64());
        Assert.Equal(1, closed.GetProperty("out_msgs").GetInt64());
        Assert.Equal(1, closed.GetProperty("subscriptions").GetInt32());
        Assert.Equal("7", closed.GetProperty("subscriptions_list_detail")[0].GetProperty("sid").GetString());

        // A protocol error closes with its own reason.
        var bad = await broker.ConnectAsync("{\"verbose\":false,\"name\":\"bad\"}");
        await bad.SendAsync("PUB foo 1\r\ntoo long\r\n");
        await bad.ExpectClosedAsync();
        await bad.DisposeAsync();
        await Eventually.AssertAsync(
            async () => (await broker.GetJsonAsync("/connz?state=closed")).GetProperty("num_connections").GetInt32() == 2,
            "the second closed connection to be recorded");

        Assert.Equal(["leaves", "bad"], await NamesAsync(broker, "/connz?state=closed&sort=reason"));
        Assert.Equal(["stays", "leaves", "bad"], await NamesAsync(broker, "/connz?state=any"));
        Assert.Equal(["stays"], await NamesAsync(broker, "/connz"));
        var stop = await broker.GetJsonAsync("/connz?state=closed&sort=stop");
        Assert.Equal("bad", stop.GetProperty("connections")[0].GetProperty("name").GetString());
        Assert.Equal("Parse Error", stop.GetProperty("connections")[0].GetProperty("reason").GetString());
    }

    [Fact(Timeout = 30_000)]
    public async Task Pending_bytes_show_output_waiting_for_a_reader_that_does_not_read()
    {
        await using var broker = await MonitoredBroker.StartAsync(options => options.WriteDeadline = TimeSpan.FromMinutes(1));
        await using var stalled = await broker.ConnectAsync("{\"verbose\":false,\"name\":\"stalled\"}");
        await using var publisher = await broker.ConnectAsync("{\"verbose\":false,\"name\":\"publisher\"}");
        await stalled.SendAsync("SUB big 1\r\n");
        await stalled.PingAndCollectAsync();

        // More than loopback socket buffers hold: the rest waits in the broker for the stalled reader.
        var payload = new string('x', 64 * 1024);
        var batch = string.Concat(Enumerable.Repeat($"PUB big {payload.Length}\r\n{payload}\r\n", 16));
        for (var i = 0; i < 32; i++)
        {
            await publisher.SendAsync(batch);
        }

        await publisher.PingAndCollectAsync(TimeSpan.FromSeconds(20));
        await Eventually.AssertAsync(
            async () => (await broker.GetJsonAsync("/connz?sort=pending")).GetProperty("connections")[0].GetProperty("pending_bytes").GetInt64() > 1024 * 1024,
            "pending bytes to show on the stalled connection");
        var first = (await broker.GetJsonAsync("/connz?sort=pending")).GetProperty("connections")[0];
        Assert.Equal("stalled", first.GetProperty("name").GetString());
        Assert.Equal(512, first.GetProperty("out_msgs").GetInt64());
    }

    [Fact(Timeout = 30_000)]
    public async Task Rtt_is_measured_from_the_servers_ping()
    {
        await using var broker = await MonitoredBroker.StartAsync(options => options.PingInterval = TimeSpan.FromMilliseconds(100));
        await using var client = await broker.ConnectAsync();
        Assert.Equal("PING", await client.ReadLineAsync());
        await client.SendAsync("PONG\r\n");
        await Eventually.AssertAsync(
            async () => (await broker.GetJsonAsync("/connz")).GetProperty("connections")[0].GetProperty("rtt").GetString() != "0s",
            "the round trip to be measured");
        var rtt = (await broker.GetJsonAsync("/connz?sort=rtt")).GetProperty("connections")[0].GetProperty("rtt").GetString();
        Assert.Matches("^[0-9]+(\\.[0-9]+)?(ns|µs|ms|s)$", rtt);
    }

    [Fact(Timeout = 30_000)]
    public async Task Max_closed_clients_bounds_the_closed_ring()
    {
        await using var broker = await MonitoredBroker.StartAsync(options => options.MaxClosedClients = 2);
        for (var i = 0; i < 4; i++)
        {
            var client = await broker.ConnectAsync($"{{\"verbose\":false,\"name\":\"n{i}\"}}");
            await client.DisposeAsync();
            await Eventually.AssertAsync(
                async () => (await broker.GetJsonAsync("/varz")).GetProperty("connections").GetInt32() == 0,
                "the connection to close");
        }

        Assert.Equal(["n2", "n3"], await NamesAsync(broker, "/connz?state=closed"));
    }

    [Fact(Timeout = 30_000)]
    public async Task Shows_the_authorized_user_only_with_auth_and_filters_by_user()
    {
        await using var broker = await MonitoredBroker.StartAsync(options => options.Authorization = new AuthorizationOptions
        {
            Users = [new UserOptions { User = "ann", Password = "a1" }, new UserOptions { User = "ben", Password = "b1" }],
        });
        await using var ann = await broker.ConnectAsync("{\"verbose\":false,\"user\":\"ann\",\"pass\":\"a1\",\"name\":\"ann-app\"}");
        await using var ben = await broker.ConnectAsync("{\"verbose\":false,\"user\":\"ben\",\"pass\":\"b1\",\"name\":\"ben-app\"}");

        var plain = await broker.GetJsonAsync("/connz");
        Assert.False(plain.GetProperty("connections")[0].TryGetProperty("authorized_user", out _));
        var withAuth = await broker.GetJsonAsync("/connz?auth=true");
        Assert.Equal("ann", withAuth.GetProperty("connections")[0].GetProperty("authorized_user").GetString());
        Assert.Equal(["ben-app"], await NamesAsync(broker, "/connz?user=ben"));
        Assert.True((await broker.GetJsonAsync("/varz")).GetProperty("auth_required").GetBoolean());
    }

    [Theory(Timeout = 30_000)]
    [InlineData("/connz?sort=bogus", "invalid sorting option: bogus")]
    [InlineData("/connz?sort=stop", "sort by stop only valid on closed connections")]
    [InlineData("/connz?sort=reason&state=any", "sort by reason only valid on closed connections")]
    [InlineData("/connz?limit=x", "Error decoding int for 'limit': strconv.Atoi: parsing \"x\": invalid syntax")]
    [InlineData("/connz?offset=99999999999999999999", "Error decoding int for 'offset': strconv.Atoi: parsing \"99999999999999999999\": value out of range")]
    [InlineData("/connz?subs=maybe", "Error decoding boolean for 'subs': strconv.ParseBool: parsing \"maybe\": invalid syntax")]
    [InlineData("/connz?cid=-1", "Error decoding uint64 for 'cid': strconv.ParseUint: parsing \"-1\": invalid syntax")]
    [InlineData("/connz?state=x", "Error decoding state for x")]
    public async Task Bad_query_values_get_400_with_nats_server_wording(string path, string message)
    {
        await using var broker = await MonitoredBroker.StartAsync();
        var (status, body, response) = await broker.GetAsync(path);
        Assert.Equal(HttpStatusCode.BadRequest, status);
        Assert.Equal(message, body);
        Assert.Equal("text/plain", response.Content.Headers.ContentType?.MediaType);
        response.Dispose();
    }

    [Fact(Timeout = 30_000)]
    public async Task An_unknown_account_gets_an_empty_answer_without_server_id_as_nats_server_gives()
    {
        await using var broker = await MonitoredBroker.StartAsync();
        await using var client = await broker.ConnectAsync();
        Assert.Single(await NamesAsync(broker, "/connz?acc=$G", allowUnnamed: true));
        var unknown = await broker.GetJsonAsync("/connz?acc=OTHER&limit=5");
        Assert.Equal(JsonValueKind.Null, unknown.GetProperty("connections").ValueKind);
        Assert.Equal("", unknown.GetProperty("server_id").GetString());
        Assert.Equal(0, unknown.GetProperty("total").GetInt32());
        Assert.Equal(5, unknown.GetProperty("limit").GetInt32());
    }

    private static async Task<List<string?>> NamesAsync(MonitoredBroker broker, string path, bool allowUnnamed = false)
    {
        var connz = await broker.GetJsonAsync(path);
        return [.. connz.GetProperty("connections").EnumerateArray()
            .Select(c => c.TryGetProperty("name", out var name) ? name.GetString() : (allowUnnamed ? null : throw new InvalidOperationException("unnamed")))];
    }
}
