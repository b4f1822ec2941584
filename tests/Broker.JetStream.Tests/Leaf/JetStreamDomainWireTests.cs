using System.Globalization;
using System.Net;
using System.Net.Sockets;
using System.Text;
using Broker.Core;
using Broker.JetStream.Tests.Sources;
using NATS.Client.Core;

namespace Broker.JetStream.Tests.Leaf;

/// <summary>
/// A spoke with JetStream in domain <c>edge</c> against a scripted hub of domain <c>hub</c> on a raw socket: the CONNECT
/// says the domain and that the account has JetStream (nats-server's <c>leafConnectInfo</c>), the spoke announces its
/// domain's API (the sources of nats-server's <c>generateJSMappingTable</c>), and a request for its own domain never
/// crosses to the hub even when the hub shows interest in it (<c>blockMappingOutgoing</c>), nor does <c>$JS.API</c>.
/// Clients learn the domain from INFO. Our broker and nats-server 2.9.10 as the spoke, the same bytes expected.
/// </summary>
public sealed class JetStreamDomainWireTests
{
    [Theory(Timeout = 60_000)]
    [MemberData(nameof(SourceTestKit.Kinds), MemberType = typeof(SourceTestKit))]
    public async Task The_spoke_announces_its_domain_and_keeps_its_requests(ServerKind kind)
    {
        using var listener = new TcpListener(IPAddress.Loopback, 0);
        listener.Start();
        var port = ((IPEndPoint)listener.LocalEndpoint).Port;
        var url = $"nats-leaf://127.0.0.1:{port.ToString(CultureInfo.InvariantCulture)}";
        await using var spoke = await JetStreamServer.StartAsync(
            kind,
            options => options.Domain = "edge",
            broker: options => options.LeafNodes.Remotes.Add(new LeafRemoteOptions { Urls = [url] }),
            referenceConfig: $"jetstream {{ domain: edge }}\nleafnodes {{ remotes: [ {{ url: \"{url}\" }} ] }}\n");

        using var cts = new CancellationTokenSource(TimeSpan.FromSeconds(20));

        // Clients learn the domain from INFO too.
        using (var raw = new TcpClient())
        {
            await raw.ConnectAsync((IPEndPoint)spoke.EndPoint, cts.Token);
            var info = await new StreamReader(raw.GetStream(), Encoding.ASCII).ReadLineAsync(cts.Token);
            Assert.Contains("\"domain\":\"edge\"", info, StringComparison.Ordinal);
        }

        using var hub = await listener.AcceptTcpClientAsync(cts.Token);
        var stream = hub.GetStream();
        var reader = new StreamReader(stream, Encoding.ASCII);
        await Send(stream, "INFO {\"server_id\":\"HUB\",\"server_name\":\"hub\",\"version\":\"2.9.10\",\"headers\":true,\"max_payload\":1048576,\"jetstream\":true,\"domain\":\"hub\",\"client_id\":7,\"nonce\":\"abc\",\"leafnode_urls\":[\"127.0.0.1:" + port + "\"],\"info_on_connect\":true}\r\n");
        var connect = await reader.ReadLineAsync(cts.Token);
        Assert.StartsWith("CONNECT {", connect, StringComparison.Ordinal);
        Assert.Contains("\"domain\":\"edge\"", connect, StringComparison.Ordinal);
        Assert.Contains("\"jetstream\":true", connect, StringComparison.Ordinal);

        await Send(stream, "INFO {\"server_id\":\"HUB\",\"client_id\":7,\"leafnode_urls\":[],\"connect_info\":true}\r\n");
        string[] domainApi =
        [
            "LS+ $JS.edge.API.INFO", "LS+ $JS.edge.API.STREAM.>", "LS+ $JS.edge.API.CONSUMER.>", "LS+ $JS.edge.API.DIRECT.>",
            "LS+ $JS.edge.API.META.>", "LS+ $JS.edge.API.SERVER.>", "LS+ $JS.edge.API.ACCOUNT.>", "LS+ $JS.edge.API.$KV.>",
            "LS+ $JS.edge.API.$OBJ.>",
        ];
        var announced = new HashSet<string>(StringComparer.Ordinal);
        while (!domainApi.All(announced.Contains))
        {
            var line = await reader.ReadLineAsync(cts.Token) ?? throw new EndOfStreamException(string.Join("|", announced));
            Assert.False(line.StartsWith("LS+ $JS.API", StringComparison.Ordinal), line);
            announced.Add(line);
        }

        // The hub shows interest in the spoke's own domain, its plain API and a probe subject: only the probe crosses.
        await Send(stream, "LS+ $JS.edge.API.>\r\nLS+ $JS.API.>\r\nLS+ probe\r\nPING\r\n");
        await NextAsync(reader, "PONG", cts.Token);
        await using var client = new NatsConnection(new NatsOpts { Url = spoke.Url });
        await client.ConnectAsync();
        await client.PublishAsync("$JS.edge.API.STREAM.NAMES", "{}", cancellationToken: cts.Token);
        await client.PublishAsync("$JS.API.STREAM.NAMES", "{}", cancellationToken: cts.Token);
        await client.PublishAsync("probe", "p", cancellationToken: cts.Token);
        await NextAsync(reader, "LMSG probe 1", cts.Token);
    }

    private static async Task NextAsync(StreamReader reader, string expected, CancellationToken cancellationToken)
    {
        while (true)
        {
            var line = await reader.ReadLineAsync(cancellationToken) ?? throw new EndOfStreamException();
            if (line == "PING" || line.StartsWith("LS", StringComparison.Ordinal))
            {
                continue;
            }

            Assert.Equal(expected, line);
            return;
        }
    }

    private static Task Send(NetworkStream stream, string text) => stream.WriteAsync(Encoding.ASCII.GetBytes(text)).AsTask();
}
