using System.Globalization;
using System.Net.Http;
using System.Text.Json;
using Broker.TestKit;

namespace Broker.Core.Tests.Leaf;

/// <summary>
/// A nats-server 2.9.10 hub accepting leaf nodes on 127.0.0.1 (<c>leafnodes { listen }</c>) with its monitoring port
/// on, so tests can wait for a link and its interest on the hub's /leafz. <see cref="RestartAsync"/> keeps the ports.
/// </summary>
internal sealed class LeafHub : IAsyncDisposable
{
    private readonly string config;
    private ReferenceServer server;

    private LeafHub(ReferenceServer server, int leafPort, int httpPort, string config)
    {
        this.server = server;
        LeafPort = leafPort;
        HttpPort = httpPort;
        this.config = config;
    }

    public int LeafPort { get; }

    public int HttpPort { get; }

    public string ClientUrl => server.Url;

    public string Log => server.Log;

    /// <summary>The leaf URL, with <paramref name="userInfo"/> (<c>user:pass</c>) when given.</summary>
    public string LeafUrl(string? userInfo = null) => $"nats-leaf://{(userInfo is null ? "" : userInfo + "@")}127.0.0.1:{LeafPort}";

    /// <summary>Starts a hub; <paramref name="leafBlock"/> goes inside <c>leafnodes { }</c> after <c>listen</c>, <paramref name="extra"/> at the top level.</summary>
    public static async Task<LeafHub> StartAsync(string leafBlock = "", string extra = "")
    {
        var leafPort = Ports.GetFreePort();
        var httpPort = Ports.GetFreePort();
        var config = Config(leafPort, httpPort, leafBlock, extra);
        var server = await ReferenceServer.StartAsync(config).ConfigureAwait(false);
        return new LeafHub(server, leafPort, httpPort, config);
    }

    private static string Config(int leafPort, int httpPort, string leafBlock, string extra) =>
        $"http: \"127.0.0.1:{httpPort.ToString(CultureInfo.InvariantCulture)}\"\n" +
        $"leafnodes {{\n  listen: \"127.0.0.1:{leafPort.ToString(CultureInfo.InvariantCulture)}\"\n{leafBlock}\n}}\n{extra}\n";

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
