using System.Globalization;
using System.Text.Json;
using Broker.Compare.Load;
using Broker.Compare.Rows;
using Broker.Compare.Servers;

namespace Broker.Compare;

/// <summary>
/// The rows across a link: each side starts two servers of its own kind on 127.0.0.1 ports they pick themselves, a leaf node hub
/// (<c>leafnodes { listen }</c>) and a spoke (<c>leafnodes { remotes }</c> to the hub), or two cluster members, the second routed
/// to the first (<c>cluster { name, listen, routes }</c>), waits until /leafz or /routez on both shows the link,
/// then runs the row as any other with the publishers on one server and the subscribers on the other (each run waits
/// for its subscribers' interest to cross the link, <see cref="LinkInterest"/>). Server CPU is the pair's. The
/// <c>--accounts</c> option does not apply to these rows.
/// </summary>
internal sealed partial class CompareRunner
{
    private static readonly TimeSpan LinkTimeout = TimeSpan.FromSeconds(30);

    // The first server's leaf node or cluster port (bound by it, read back), in the second's configuration.
    private const string FirstPortPlaceholder = "{first_port}";

    private const string LeafHubConfig = """
        leafnodes { listen: "127.0.0.1:{leaf_port}" }
        http: "127.0.0.1:{http_port}"
        """;

    private const string LeafSpokeConfig = """
        leafnodes { remotes: [ { url: "nats-leaf://127.0.0.1:{first_port}" } ] }
        http: "127.0.0.1:{http_port}"
        """;

    // The first member lists no route: the second solicits it (one route either way). A port chosen for the second
    // before it starts, so that each could list the other, is a port another process can take in the meantime.
    private const string RouteFirstConfig = """
        cluster { name: bench, listen: "127.0.0.1:{route_port}" }
        http: "127.0.0.1:{http_port}"
        """;

    private const string RouteSecondConfig = """
        cluster { name: bench, listen: "127.0.0.1:{route_port}", routes: [ "nats-route://127.0.0.1:{first_port}" ] }
        http: "127.0.0.1:{http_port}"
        """;

    // Each side's first server (the hub, or the publishers' cluster member) while a linked row runs (RunRow gets the
    // second ones as its servers); null otherwise.
    private Dictionary<Side, ServerProcess>? linkFirsts;

    private void RunLinked(RowResult result, Report.CompareReport report, CancellationToken cancellationToken)
    {
        var route = result.Row.Link == ServerLink.Route;
        var what = route ? "route" : "leaf link";
        var firsts = new Dictionary<Side, ServerProcess>();
        var seconds = new Dictionary<Side, ServerProcess>();
        try
        {
            foreach (var (side, launch) in new[] { (Side.NatsServer, natsLaunch), (Side.Ours, oursLaunch) })
            {
                try
                {
                    var first = firsts[side] = ServerProcess.Start(launch with { Config = route ? RouteFirstConfig : LeafHubConfig }, cancellationToken);
                    var firstPort = first.Listeners[route ? ListenerKind.Route : ListenerKind.Leaf].Port.ToString(CultureInfo.InvariantCulture);
                    var secondConfig = (route ? RouteSecondConfig : LeafSpokeConfig).Replace(FirstPortPlaceholder, firstPort, StringComparison.Ordinal);
                    var second = seconds[side] = ServerProcess.Start(launch with { Config = secondConfig }, cancellationToken);
                    WaitForLink(first, second, route, cancellationToken);
                    if (side == Side.Ours && report.OursVersion.Length == 0)
                    {
                        report.OursVersion = VersionOf(first.Info, "broker_version");
                    }
                }
                catch (Exception ex) when (ex is ServerStartException or TimeoutException or HttpRequestException or InvalidOperationException)
                {
                    result.Fail(side, $"{what}: {ex.Message}");
                    log.WriteLine($"{result.Row.Id,-16} {Name(side),-11} FAILED: {what}: {ex.Message}");
                    firsts.Remove(side, out var first);
                    first?.Dispose();
                    seconds.Remove(side, out var second);
                    second?.Dispose();
                }
            }

            linkFirsts = firsts;
            var sides = seconds.Keys.Order().Select(side => (side, (Dictionary<Side, ServerProcess>?)seconds)).ToArray();
            if (sides.Length > 0)
            {
                RunRow(result, sides, cancellationToken);
            }
        }
        finally
        {
            linkFirsts = null;
            foreach (var server in firsts.Values.Concat(seconds.Values))
            {
                server.Dispose();
            }
        }
    }

    /// <summary>The publishers' server with the subscribers' server beside it, as the row's direction says (a route's publishers are on the first member).</summary>
    private static NatsEndpoint LinkEndPoint(Row row, ServerProcess first, NatsEndpoint second)
        => row.Link is ServerLink.HubToSpoke or ServerLink.Route
            ? first.EndPointFor(NatsTransport.Tcp) with { SubscriberServer = second }
            : second with { SubscriberServer = first.EndPointFor(NatsTransport.Tcp) };

    /// <summary>Polls /leafz (or /routez) on both servers until each counts the link; throws <see cref="TimeoutException"/> after 30 s.</summary>
    private static void WaitForLink(ServerProcess first, ServerProcess second, bool route, CancellationToken cancellationToken)
    {
        using var http = new HttpClient { Timeout = TimeSpan.FromSeconds(5) };
        var deadline = DateTime.UtcNow + LinkTimeout;
        foreach (var server in new[] { first, second })
        {
            var url = new Uri($"http://{server.Listeners[ListenerKind.Http]}/{(route ? "routez" : "leafz")}");
            while (LinkCount(http, url, route ? "num_routes" : "leafnodes", cancellationToken) < 1)
            {
                server.EnsureRunning();
                if (DateTime.UtcNow > deadline)
                {
                    throw new TimeoutException($"{url} showed no {(route ? "route" : "leaf node link")} within {LinkTimeout.TotalSeconds:0} s: {server.OutputTail}");
                }

                Task.Delay(50, cancellationToken).GetAwaiter().GetResult();
            }
        }
    }

    private static int LinkCount(HttpClient http, Uri url, string countKey, CancellationToken cancellationToken)
    {
        using var document = JsonDocument.Parse(http.GetStringAsync(url, cancellationToken).GetAwaiter().GetResult());
        return document.RootElement.TryGetProperty(countKey, out var count) ? count.GetInt32() : 0;
    }
}
