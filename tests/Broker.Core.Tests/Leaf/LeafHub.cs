using System.Globalization;
using System.Net.Http;
using System.Text.Json;
using Broker.TestKit;

namespace Broker.Core.Tests.Leaf;

/// <summary>
/// A nats-server 2.9.10 hub accepting leaf nodes on 127.0.0.1 (<c>leafnodes { listen }</c>) with its monitoring port
/// on, so tests can wait for a link and its interest on the hub's /leafz. <see cref="RestartAsync"/> keeps the ports.
/// </summary>
internal sealed class LeafHub : ILeafHubUnderTest, IAsyncDisposable
{
    private readonly string config;
    private ReferenceServer server;

    private LeafHub(ReferenceServer server, int leafPort, int httpPort, string config, string host, int webSocketPort)
    {
        this.server = server;
        LeafPort = leafPort;
        HttpPort = httpPort;
        this.config = config;
        Host = host;
        WebSocketPort = webSocketPort;
    }

    public int LeafPort { get; }

    /// <summary>The address the leaf and websocket ports listen on (127.0.0.1 unless given).</summary>
    public string Host { get; }

    /// <summary>The <c>websocket</c> port, when the hub was started with one.</summary>
    public int WebSocketPort { get; }

    public int HttpPort { get; }

    public string ClientUrl => server.Url;

    public string Log => server.Log;

    /// <summary>The leaf URL, with <paramref name="userInfo"/> (<c>user:pass</c>) when given.</summary>
    public string LeafUrl(string? userInfo = null) => $"nats-leaf://{(userInfo is null ? "" : userInfo + "@")}{Host}:{LeafPort}";

    /// <summary>The URL of the <c>websocket</c> port with <paramref name="scheme"/> (<c>ws</c> or <c>wss</c>).</summary>
    public string WebSocketUrl(string scheme = "ws") => $"{scheme}://{Host}:{WebSocketPort}";

    /// <summary>
    /// Starts a hub; <paramref name="leafBlock"/> goes inside <c>leafnodes { }</c> after <c>listen</c>, <paramref name="extra"/> at the top level,
    /// <paramref name="websocket"/> (when given) inside a <c>websocket { }</c> block after its <c>listen</c>; the leaf and websocket ports listen on <paramref name="host"/>.
    /// </summary>
    public static async Task<LeafHub> StartAsync(string leafBlock = "", string extra = "", string? websocket = null, string host = "127.0.0.1")
    {
        var leafPort = Ports.GetFreePort();
        var httpPort = Ports.GetFreePort();
        var webSocketPort = websocket is null ? 0 : Ports.GetFreePort();
        var config = Config(host, leafPort, httpPort, leafBlock, extra);
        if (websocket is not null)
        {
            config += $"websocket {{\n  listen: \"{host}:{webSocketPort.ToString(CultureInfo.InvariantCulture)}\"\n{websocket}\n}}\n";
        }

        var server = await ReferenceServer.StartAsync(config).ConfigureAwait(false);
        return new LeafHub(server, leafPort, httpPort, config, host, webSocketPort);
    }

    private static string Config(string host, int leafPort, int httpPort, string leafBlock, string extra) =>
        $"http: \"127.0.0.1:{httpPort.ToString(CultureInfo.InvariantCulture)}\"\n" +
        $"leafnodes {{\n  listen: \"{host}:{leafPort.ToString(CultureInfo.InvariantCulture)}\"\n{leafBlock}\n}}\n{extra}\n";

    /// <summary>Stops the hub and starts it again on the same leaf and monitoring ports.</summary>
    public async Task RestartAsync()
    {
        await server.DisposeAsync().ConfigureAwait(false);
        server = await ReferenceServer.StartAsync(config).ConfigureAwait(false);
    }

    /// <summary>The hub's /leafz?subs=1.</summary>
    public Task<JsonElement> LeafzAsync() => GetAsync(HttpPort, "/leafz?subs=1");

    /// <summary>Waits until the hub has <paramref name="links"/> links, and each subject of <paramref name="subjects"/> in a link's interest.</summary>
    public Task WaitForLinksAsync(int links, params string[] subjects) => WaitForLeafzAsync(HttpPort, links, subjects, "the hub");

    /// <summary>Polls /leafz?subs=1 on <paramref name="httpPort"/> until it shows the links and the subjects.</summary>
    public static Task WaitForLeafzAsync(int httpPort, int links, string[] subjects, string who) =>
        Eventually.AssertAsync(
            async () =>
            {
                JsonElement leafz;
                try
                {
                    leafz = await GetAsync(httpPort, "/leafz?subs=1").ConfigureAwait(false);
                }
                catch (HttpRequestException)
                {
                    return false;
                }

                if (leafz.GetProperty("leafnodes").GetInt32() != links)
                {
                    return false;
                }

                var all = links == 0 ? [] : leafz.GetProperty("leafs").EnumerateArray()
                    .SelectMany(l => l.TryGetProperty("subscriptions_list", out var list) ? list.EnumerateArray().Select(s => s.GetString()!) : [])
                    .ToHashSet(StringComparer.Ordinal);
                return subjects.All(all.Contains);
            },
            $"{who} to have {links} leaf link(s) with interest in [{string.Join(", ", subjects)}]",
            TimeSpan.FromSeconds(15));

    public static async Task<JsonElement> GetAsync(int httpPort, string path)
    {
        using var http = new HttpClient { Timeout = TimeSpan.FromSeconds(5) };
        var text = await http.GetStringAsync(new Uri($"http://127.0.0.1:{httpPort.ToString(CultureInfo.InvariantCulture)}{path}")).ConfigureAwait(false);
        return JsonDocument.Parse(text).RootElement.Clone();
    }

    public ValueTask DisposeAsync() => server.DisposeAsync();
}

/// <summary>A hub the traffic checks run against: nats-server's (<see cref="LeafHub"/>) or either kind (<see cref="HubUnderTest"/>).</summary>
internal interface ILeafHubUnderTest
{
    /// <summary>The hub's client URL.</summary>
    string ClientUrl { get; }

    /// <summary>Waits until the hub has <paramref name="links"/> links, and each subject of <paramref name="subjects"/> in a link's interest.</summary>
    Task WaitForLinksAsync(int links, params string[] subjects);
}
