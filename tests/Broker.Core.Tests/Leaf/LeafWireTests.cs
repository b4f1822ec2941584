using System.Net;
using System.Net.Sockets;
using System.Text;
using Broker.TestKit;
using NATS.Client.Core;
using Xunit;

namespace Broker.Core.Tests.Leaf;

/// <summary>
/// The spoke's bytes against a scripted hub on a raw socket (nats-server's test/leafnode_test.go tier): CONNECT
/// without <c>lang</c> after the hub's INFO, nothing more until the connect-info INFO, then the interest snapshot with
/// the loop detection subject and queue weights; LS+ updates with the new weight; LMSG with a queue list served once.
/// </summary>
public sealed class LeafWireTests
{
    [Fact]
    public async Task The_handshake_and_interest_are_nats_servers()
    {
        using var listener = new TcpListener(IPAddress.Loopback, 0);
        listener.Start();
        var port = ((IPEndPoint)listener.LocalEndpoint).Port;
        await using var spoke = await TestBroker.StartAsync(o => o.LeafNodes.Remotes.Add(new LeafRemoteOptions { Urls = [$"nats-leaf://u:p@127.0.0.1:{port}"] }));
        await using var client = await NatsClients.ConnectAsync(spoke.Url, "spoke");
        await using var member1 = await client.SubscribeCoreAsync<string>("jobs", queueGroup: "q");
        await using var member2 = await client.SubscribeCoreAsync<string>("jobs", queueGroup: "q");
        await using var plain = await client.SubscribeCoreAsync<string>("news");
        await client.PingAsync();

        using var cts = new CancellationTokenSource(TimeSpan.FromSeconds(10));
        using var hub = await listener.AcceptTcpClientAsync(cts.Token);
        var stream = hub.GetStream();
        var reader = new StreamReader(stream, Encoding.ASCII);
        await Send(stream, "INFO {\"server_id\":\"HUB\",\"server_name\":\"hub\",\"version\":\"2.9.10\",\"headers\":true,\"max_payload\":1048576,\"client_id\":7,\"nonce\":\"abc\",\"leafnode_urls\":[\"127.0.0.1:" + port + "\"],\"info_on_connect\":true}\r\n");
        var connect = await reader.ReadLineAsync(cts.Token);
        Assert.StartsWith("CONNECT {", connect, StringComparison.Ordinal);
        Assert.DoesNotContain("\"lang\"", connect, StringComparison.Ordinal);
        Assert.Contains("\"user\":\"u\"", connect, StringComparison.Ordinal);
        Assert.Contains("\"pass\":\"p\"", connect, StringComparison.Ordinal);
        Assert.Contains("\"headers\":true", connect, StringComparison.Ordinal);

        await Send(stream, "INFO {\"server_id\":\"HUB\",\"client_id\":7,\"leafnode_urls\":[],\"connect_info\":true,\"remote_account\":\"$G\"}\r\n");
        var snapshot = new List<string>();
        while (!snapshot.Any(l => l.StartsWith("LS+ $LDS.", StringComparison.Ordinal)) || !snapshot.Contains("LS+ jobs q 2") || !snapshot.Contains("LS+ news"))
        {
            var line = await reader.ReadLineAsync(cts.Token) ?? throw new EndOfStreamException(string.Join("|", snapshot));
            if (line != "PING")
            {
                snapshot.Add(line);
            }
        }

        // A third member: the group's whole weight again.
        await using var member3 = await client.SubscribeCoreAsync<string>("jobs", queueGroup: "q");
        await client.PingAsync();
        Assert.Equal("LS+ jobs q 3", await NextNonPing(reader, cts.Token));

        // The hub's interest and a message for the queue group: one member gets it.
        await Send(stream, "LS+ up.>\r\nLMSG jobs | q 5\r\nhello\r\nLMSG news 4\r\nnews\r\n");
        Assert.Equal("news", (await plain.NextAsync()).Data);
        var got = 0;
        foreach (var member in new[] { member1, member2, member3 })
        {
            got += member.Msgs.TryRead(out _) ? 1 : 0;
        }

        Assert.True(await Eventually.TrueAsync(() =>
        {
            foreach (var member in new[] { member1, member2, member3 })
            {
                got += member.Msgs.TryRead(out _) ? 1 : 0;
            }

            return got >= 1;
        }));
        Assert.Equal(1, got);

        // A local publish on the hub's interest goes up as LMSG, with headers as HMSG.
        await client.PublishAsync("up.a", "x", headers: new NatsHeaders { ["K"] = "v" });
        await client.PublishAsync("up.b", "yz", replyTo: "r");
        Assert.Equal("HMSG up.a 18 19", await NextNonPing(reader, cts.Token));
        Assert.Equal("NATS/1.0", await reader.ReadLineAsync(cts.Token));
        Assert.Equal("K: v", await reader.ReadLineAsync(cts.Token));
        Assert.Equal("", await reader.ReadLineAsync(cts.Token));
        Assert.Equal("x", await reader.ReadLineAsync(cts.Token));
        Assert.Equal("LMSG up.b r 2", await NextNonPing(reader, cts.Token));
    }

    private static async Task<string?> NextNonPing(StreamReader reader, CancellationToken token)
    {
        while (true)
        {
            var line = await reader.ReadLineAsync(token);
            if (line != "PING")
            {
                return line;
            }
        }
    }

    private static async Task Send(NetworkStream stream, string text) => await stream.WriteAsync(Encoding.ASCII.GetBytes(text));
}
