using System.Globalization;
using System.Text.Json;
using Broker.Compare.Load;
using Broker.Compare.Rows;
using Broker.Compare.Servers;

namespace Broker.Compare;

/// <summary>
/// The leaf node rows: each side starts a hub (<c>leafnodes { listen }</c>) and a spoke of its own kind
/// (<c>leafnodes { remotes }</c> to the hub), on fresh 127.0.0.1 ports, waits until /leafz on both shows the link,
/// then runs the row as any other with the publishers on one server and the subscribers on the other (each run waits
/// for its subscribers' interest to cross the link, <see cref="LinkInterest"/>). Server CPU is the pair's. The
/// <c>--accounts</c> option does not apply to these rows.
/// </summary>
internal sealed partial class CompareRunner
{
    private static readonly TimeSpan LinkTimeout = TimeSpan.FromSeconds(30);

    private const string HubLeafPortPlaceholder = "{hub_leaf_port}";

    private const string LeafHubConfig = """
        leafnodes { listen: "127.0.0.1:{leaf_port}" }
        http: "127.0.0.1:{http_port}"
        """;

    private const string LeafSpokeConfig = """
        leafnodes { remotes: [ { url: "nats-leaf://127.0.0.1:{hub_leaf_port}" } ] }
        http: "127.0.0.1:{http_port}"
        """;

    // Each side's hub while a leaf row runs (RunRow gets the spokes as its servers); null otherwise.
    private Dictionary<Side, ServerProcess>? leafHubs;

    private void RunLeaf(RowResult result, Report.CompareReport report, CancellationToken cancellationToken)
    {
        var hubs = new Dictionary<Side, ServerProcess>();
        var spokes = new Dictionary<Side, ServerProcess>();
        try
        {
            foreach (var (side, launch) in new[] { (Side.NatsServer, natsLaunch), (Side.Ours, oursLaunch) })
            {
                try
                {
                    var hub = hubs[side] = ServerProcess.Start(launch with { Config = LeafHubConfig }, cancellationToken);
                    var hubLeafPort = hub.Listeners[ListenerKind.Leaf].Port.ToString(CultureInfo.InvariantCulture);
                    var spoke = spokes[side] = ServerProcess.Start(launch with { Config = LeafSpokeConfig.Replace(HubLeafPortPlaceholder, hubLeafPort, StringComparison.Ordinal) }, cancellationToken);
                    WaitForLink(hub, spoke, cancellationToken);
                    if (side == Side.Ours && report.OursVersion.Length == 0)
                    {
                        report.OursVersion = VersionOf(hub.Info, "broker_version");
                    }
                }
                catch (Exception ex) when (ex is ServerStartException or TimeoutException or HttpRequestException or InvalidOperationException)
                {
                    result.Fail(side, "leaf link: " + ex.Message);
                    log.WriteLine($"{result.Row.Id,-16} {Name(side),-11} FAILED: leaf link: {ex.Message}");
                    hubs.Remove(side, out var hub);
                    hub?.Dispose();
                    spokes.Remove(side, out var spoke);
                    spoke?.Dispose();
                }
            }

            leafHubs = hubs;
            var sides = spokes.Keys.Order().Select(side => (side, (Dictionary<Side, ServerProcess>?)spokes)).ToArray();
            if (sides.Length > 0)
            {
                RunRow(result, sides, cancellationToken);
            }
        }
        finally
        {
            leafHubs = null;
            foreach (var server in hubs.Values.Concat(spokes.Values))
            {
                server.Dispose();
            }
        }
    }

    /// <summary>The publishers' server with the subscribers' server beside it, as the row's direction says.</summary>
    private static NatsEndpoint LeafEndPoint(Row row, ServerProcess hub, NatsEndpoint spoke)
        => row.Leaf == LeafLink.HubToSpoke
            ? hub.EndPointFor(NatsTransport.Tcp) with { SubscriberServer = spoke }
            : spoke with { SubscriberServer = hub.EndPointFor(NatsTransport.Tcp) };

    /// <summary>Polls /leafz on the hub and the spoke until each counts the link; throws <see cref="TimeoutException"/> after 30 s.</summary>
    private static void WaitForLink(ServerProcess hub, ServerProcess spoke, CancellationToken cancellationToken)
    {
        using var http = new HttpClient { Timeout = TimeSpan.FromSeconds(5) };
        var deadline = DateTime.UtcNow + LinkTimeout;
        foreach (var server in new[] { hub, spoke })
        {
            var url = new Uri($"http://{server.Listeners[ListenerKind.Http]}/leafz");
            while (LeafCount(http, url, cancellationToken) < 1)
            {
                server.EnsureRunning();
                if (DateTime.UtcNow > deadline)
                {
                    throw new TimeoutException($"{url} showed no leaf node link within {LinkTimeout.TotalSeconds:0} s: {server.OutputTail}");
                }

                Task.Delay(50, cancellationToken).GetAwaiter().GetResult();
            }
        }
    }

    private static int LeafCount(HttpClient http, Uri url, CancellationToken cancellationToken)
    {
        using var document = JsonDocument.Parse(http.GetStringAsync(url, cancellationToken).GetAwaiter().GetResult());
        return document.RootElement.TryGetProperty("leafnodes", out var count) ? count.GetInt32() : 0;
    }
}
