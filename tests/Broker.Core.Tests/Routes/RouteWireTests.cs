using System.Net;
using System.Text.Json;
using Broker.TestKit;
using NATS.Client.Core;
using Xunit;

namespace Broker.Core.Tests.Routes;

/// <summary>
/// A scripted member on a raw socket against the route port of our broker and of nats-server 2.9.10, the same script
/// for both: the INFO a route gets, CONNECT refusals (a client's <c>lang</c>, another cluster name), RS+/RS- for
/// clients' interest with queue weights, RMSG/HMSG in every form delivered to clients, and what a client's publish
/// sends to the member (plain, reply, queue with and without reply). The system account's lines are left out.
/// </summary>
public sealed class RouteWireTests
{
    public static TheoryData<ServerKind> Kinds => new() { ServerKind.Ours, ServerKind.Reference };

    internal const string Connect = "CONNECT {\"echo\":true,\"verbose\":false,\"pedantic\":false,\"tls_required\":false,\"headers\":true,\"name\":\"NFAKEROUTE\",\"cluster\":\"C\"}\r\n";

    internal const string Info = "INFO {\"server_id\":\"NFAKEROUTE\",\"server_name\":\"fake\",\"version\":\"2.9.10\",\"proto\":2,\"host\":\"127.0.0.1\",\"port\":1,\"headers\":true,\"max_payload\":1048576,\"cluster\":\"C\"}\r\n";

    [Theory]
    [MemberData(nameof(Kinds))]
    public async Task A_scripted_member_exchanges_interest_and_messages_in_every_form(ServerKind kind)
    {
        await using var node = await ClusterNode.StartAsync(kind, "A");
        await using var route = await RawClient.ConnectAsync(new IPEndPoint(IPAddress.Loopback, node.ClusterPort));
        using (var info = JsonDocument.Parse(route.Info!["INFO ".Length..]))
        {
            var root = info.RootElement;
            Assert.Equal(("C", true, 2), (root.GetProperty("cluster").GetString(), root.GetProperty("headers").GetBoolean(), root.GetProperty("proto").GetInt32()));
            Assert.Equal(node.ClusterPort, root.GetProperty("port").GetInt32());
            Assert.False(root.TryGetProperty("jetstream", out _));
            Assert.True(root.GetProperty("connect_urls").GetArrayLength() > 0);
        }

        await route.SendAsync(Connect + Info);
        await using var client = await NatsClients.ConnectAsync(node.ClientUrl, "client");
        await using var plain = await client.SubscribeCoreAsync<string>("sub.a");
        await using var member1 = await client.SubscribeCoreAsync<string>("q.b", queueGroup: "g");
        await using var member2 = await client.SubscribeCoreAsync<string>("q.b", queueGroup: "g");
        await client.PingAsync();
        await ExpectAsync(route, "RS+ $G sub.a", "RS+ $G q.b g 2");

        // The member's messages: plain with a reply, a queue without one, headers.
        await route.SendAsync("RMSG $G sub.a reply.x 5\r\nhello\r\nRMSG $G q.b | g 2\r\nhi\r\nHMSG $G sub.a 20 22\r\nNATS/1.0\r\nX-A: 1\r\n\r\nok\r\n");
        var first = await plain.NextAsync();
        Assert.Equal(("hello", "reply.x"), (first.Data, first.ReplyTo));
        var queued = await Task.WhenAny(member1.NextAsync(), member2.NextAsync()).Unwrap();
        Assert.Equal("hi", queued.Data);
        var withHeaders = await plain.NextAsync();
        Assert.Equal(("ok", "1"), (withHeaders.Data, withHeaders.Headers?["X-A"].ToString()));

        // The member's interest, then a client's publishes go out as the member's forms.
        await route.SendAsync("RS+ $G to.route\r\nRS+ $G wq grp 2\r\nPING\r\n");
        await ExpectAsync(route, "PONG");
        await node.WaitForRoutesAsync(1, "to.route", "wq");
        await client.PublishAsync("to.route", "abc");
        await client.PublishAsync("to.route", "req", replyTo: "my.inbox");
        await client.PublishAsync("wq", "w1");
        await client.PublishAsync("wq", "w2", replyTo: "my.inbox");
        await client.PingAsync();
        await ExpectAsync(route, "RMSG $G to.route 3", "abc", "RMSG $G to.route my.inbox 3", "req", "RMSG $G wq | grp 2", "w1", "RMSG $G wq + my.inbox grp 2", "w2");

        // Interest leaves: an unsubscribe, a queue member less.
        await plain.UnsubscribeAsync();
        await member2.UnsubscribeAsync();
        await client.PingAsync();
        await ExpectAsync(route, "RS- $G sub.a", "RS+ $G q.b g 1");
    }

    [Theory]
    [MemberData(nameof(Kinds))]
    public async Task A_client_on_the_route_port_and_another_cluster_are_refused(ServerKind kind)
    {
        await using var node = await ClusterNode.StartAsync(kind, "A");
        await using (var client = await RawClient.ConnectAsync(new IPEndPoint(IPAddress.Loopback, node.ClusterPort)))
        {
            await client.SendAsync("CONNECT {\"verbose\":false,\"lang\":\"go\",\"version\":\"1.0\"}\r\nPING\r\n");
            Assert.Contains("-ERR 'attempted to connect to route port'", await client.ExpectClosedAsync());
        }

        await using var other = await RawClient.ConnectAsync(new IPEndPoint(IPAddress.Loopback, node.ClusterPort));
        await other.SendAsync(Connect.Replace("\"cluster\":\"C\"", "\"cluster\":\"D\"", StringComparison.Ordinal));
        Assert.Contains("-ERR 'Rejecting connection, cluster name \"D\" does not match \"C\"'", await other.ExpectClosedAsync());
    }

    // Reads lines (answering PINGs, skipping the system account's) until each expected one came, in order.
    private static async Task ExpectAsync(RawClient route, params string[] expected)
    {
        var seen = new List<string>();
        var next = 0;
        var deadline = DateTime.UtcNow + TimeSpan.FromSeconds(10);
        while (next < expected.Length)
        {
            var left = deadline - DateTime.UtcNow;
            var line = left > TimeSpan.Zero ? await route.TryReadLineAsync(left) : null;
            Assert.True(line is not null, $"expected [{string.Join(" | ", expected[next..])}]; got [{string.Join(" | ", seen)}]");
            if (line == "PING")
            {
                await route.SendAsync("PONG\r\n");
                continue;
            }

            if (line!.Contains("$SYS", StringComparison.Ordinal))
            {
                continue;
            }

            seen.Add(line);
            if (line == expected[next])
            {
                next++;
            }
        }
    }
}
