using System.Globalization;
using System.Net;
using System.Net.Sockets;
using System.Text;
using System.Text.Json;
using Broker.Core;
using Broker.JetStream.Tests.Sources;
using NATS.Client.Core;

namespace Broker.JetStream.Tests.Leaf;

/// <summary>
/// A spoke with JetStream in domain <c>edge</c> against a scripted hub of domain <c>hub</c> on a raw socket: the CONNECT
/// says the domain and that the account has JetStream (nats-server's <c>leafConnectInfo</c>), the spoke announces its
/// domain's API (the sources of nats-server's <c>generateJSMappingTable</c>), and a request for its own domain never
/// crosses to the hub even when the hub shows interest in it (<c>blockMappingOutgoing</c>), nor does <c>$JS.API</c>.
/// Clients learn the domain from INFO. Our broker and nats-server 2.9.10 as the spoke, the same bytes expected; and the
/// same of the hub's side against a scripted spoke of domain <c>edge</c>.
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
        await ExpectDomainApiAsync(reader, "edge", plainApi: false, cts.Token);

        // The hub shows interest in the spoke's own domain, its plain API and a probe subject: only the probe crosses.
        await using var client = new NatsConnection(new NatsOpts { Url = spoke.Url });
        await client.ConnectAsync();
        await OnlyTheProbeCrossesAsync(stream, reader, client, "edge", cts.Token);
    }

    // nats-server 2.9.10 as the hub: leafNodeInfo carries the domain; addLeafNodeConnection maps the domain's API for
    // the link's account and denies it outgoing when the spoke's domain differs (blockMappingOutgoing).
    [Theory(Timeout = 60_000)]
    [MemberData(nameof(SourceTestKit.Kinds), MemberType = typeof(SourceTestKit))]
    public async Task The_hub_announces_its_domain_and_keeps_its_requests(ServerKind kind)
    {
        var leafPort = Ports.GetFreePort();
        await using var hub = await JetStreamServer.StartAsync(
            kind,
            options => options.Domain = "hub",
            broker: options =>
            {
                options.LeafNodes.Hub.Host = "127.0.0.1";
                options.LeafNodes.Hub.Port = leafPort;
            },
            referenceConfig: $"jetstream {{ domain: hub }}\nleafnodes {{ listen: \"127.0.0.1:{leafPort.ToString(CultureInfo.InvariantCulture)}\" }}\n");

        using var cts = new CancellationTokenSource(TimeSpan.FromSeconds(20));
        using var spoke = new TcpClient();
        await spoke.ConnectAsync(IPAddress.Loopback, leafPort, cts.Token);
        var stream = spoke.GetStream();
        var reader = new StreamReader(stream, Encoding.ASCII);
        // Both INFOs in nats-server's field order, the domain after the nonce (Info's order), JetStream on.
        var info = await ReadInfoAsync(reader, cts.Token);
        Assert.Equal(
            ["server_id", "server_name", "version", "proto", "go", "host", "port", "headers", "auth_required", "max_payload", "jetstream", "ip", "client_id", "nonce", "domain", "info_on_connect", "leafnode_urls"],
            info.EnumerateObject().Select(p => p.Name).ToArray());
        Assert.Equal(("hub", true), (info.GetProperty("domain").GetString(), info.GetProperty("jetstream").GetBoolean()));

        await Send(stream, "CONNECT {\"version\":\"2.9.10\",\"server_id\":\"EDGE\",\"name\":\"edge\",\"domain\":\"edge\",\"headers\":true,\"jetstream\":true}\r\n");
        var connectInfo = await ReadInfoAsync(reader, cts.Token);
        Assert.Equal(
            ["server_id", "server_name", "version", "proto", "go", "host", "port", "headers", "auth_required", "max_payload", "jetstream", "ip", "client_id", "domain", "info_on_connect", "connect_info", "leafnode_urls", "remote_account"],
            connectInfo.EnumerateObject().Select(p => p.Name).ToArray());
        Assert.Equal("hub", connectInfo.GetProperty("domain").GetString());

        // nats-server 2.9.10's hub also sends LS+ $JS.API.> here (the spoke's denies drop what would follow it); ours
        // keeps it back, as it does as a spoke.
        await ExpectDomainApiAsync(reader, "hub", plainApi: kind == ServerKind.Reference, cts.Token);

        // The spoke shows interest in the hub's own domain, its plain API and a probe subject: only the probe crosses.
        await using var client = new NatsConnection(new NatsOpts { Url = hub.Url });
        await client.ConnectAsync();
        await OnlyTheProbeCrossesAsync(stream, reader, client, "hub", cts.Token);
        Assert.Equal("p", await reader.ReadLineAsync(cts.Token));

        // A push consumer's delivery to the spoke names the stored subject after its ack reply (processMsgResults packs
        // reply@subject for links), the spoke's side unpacking it.
        Assert.Equal(default, SourceTestKit.Error(await SourceTestKit.RequestAsync(client, "$JS.API.STREAM.CREATE.S", """{"name":"S","subjects":["s.>"],"storage":"memory"}""")));
        Assert.Equal(default, SourceTestKit.Error(await SourceTestKit.RequestAsync(client, "$JS.API.CONSUMER.DURABLE.CREATE.S.C", """{"stream_name":"S","config":{"durable_name":"C","deliver_subject":"d.x","ack_policy":"explicit"}}""")));
        await Send(stream, "LS+ d.x\r\nPING\r\n");
        await NextAsync(reader, "PONG", cts.Token);
        await client.PublishAsync("s.1", "hi", cancellationToken: cts.Token);
        string? delivery;
        do
        {
            delivery = await reader.ReadLineAsync(cts.Token) ?? throw new EndOfStreamException();
        }
        while (!delivery.StartsWith("LMSG", StringComparison.Ordinal));
        Assert.Matches(@"^LMSG d\.x \$JS\.ACK\.S\.C\.1\.1\.1\.\d+\.0@s\.1 2$", delivery);
    }

    // The server's domain API announced over the link (generateJSMappingTable's sources); its plain $JS.API only when
    // plainApi says the server announces it.
    private static async Task ExpectDomainApiAsync(StreamReader reader, string domain, bool plainApi, CancellationToken cancellationToken)
    {
        string[] domainApi = [.. new[] { "INFO", "STREAM.>", "CONSUMER.>", "DIRECT.>", "META.>", "SERVER.>", "ACCOUNT.>", "$KV.>", "$OBJ.>" }.Select(s => $"LS+ $JS.{domain}.API.{s}")];
        var announced = new HashSet<string>(StringComparer.Ordinal);
        while (!domainApi.All(announced.Contains))
        {
            var line = await reader.ReadLineAsync(cancellationToken) ?? throw new EndOfStreamException(string.Join("|", announced));
            Assert.True(plainApi || !line.StartsWith("LS+ $JS.API", StringComparison.Ordinal), line);
            announced.Add(line);
        }
    }

    // The other end shows interest in the server's own domain API, its plain API and a probe subject; a client of the
    // server publishes to all three and only the probe crosses (the denies of every link and blockMappingOutgoing).
    private static async Task OnlyTheProbeCrossesAsync(NetworkStream stream, StreamReader reader, NatsConnection client, string domain, CancellationToken cancellationToken)
    {
        await Send(stream, $"LS+ $JS.{domain}.API.>\r\nLS+ $JS.API.>\r\nLS+ probe\r\nPING\r\n");
        await NextAsync(reader, "PONG", cancellationToken);
        await client.PublishAsync($"$JS.{domain}.API.STREAM.NAMES", "{}", cancellationToken: cancellationToken);
        await client.PublishAsync("$JS.API.STREAM.NAMES", "{}", cancellationToken: cancellationToken);
        await client.PublishAsync("probe", "p", cancellationToken: cancellationToken);
        await NextAsync(reader, "LMSG probe 1", cancellationToken);
    }

    private static async Task<JsonElement> ReadInfoAsync(StreamReader reader, CancellationToken cancellationToken)
    {
        var line = await reader.ReadLineAsync(cancellationToken) ?? throw new EndOfStreamException();
        Assert.StartsWith("INFO ", line, StringComparison.Ordinal);
        using var document = JsonDocument.Parse(line["INFO ".Length..]);
        return document.RootElement.Clone();
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
