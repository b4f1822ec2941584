using System.Globalization;
using System.Net;
using System.Text.Json;

namespace Broker.Compare.Servers;

/// <summary>
/// The ports a server under test bound by itself. The harness starts both servers with every port -1 (nats-server's
/// random port: the kernel picks a free one at bind) and <c>--ports_file_dir</c>, then reads the real ports back:
/// the client, monitoring and WebSocket URLs from the ports file the server writes once it listens
/// (<c>&lt;dir&gt;/&lt;executable&gt;_&lt;pid&gt;.ports</c>, nats-server's <c>logPorts</c>), the leaf node and cluster ports
/// from <c>/varz</c> (<c>leaf.port</c>, <c>cluster.cluster_port</c>; nats-server's ports file has no leaf node entry; both servers report the bound port there). Picking
/// a free port in the harness and handing it to the child raced every other process on the machine for it until the
/// child bound it (a test's outgoing connection or listener took it: "address already in use").
/// </summary>
internal static class BoundPorts
{
    /// <summary>What every port setting of a launch becomes: nats-server's RANDOM_PORT.</summary>
    public const string RandomPort = "-1";

    private static readonly TimeSpan PollInterval = TimeSpan.FromMilliseconds(2);

    /// <summary>
    /// Polls <paramref name="directory"/> until the ports file of process <paramref name="processId"/> names every
    /// listener in <paramref name="wanted"/> (reading <c>/varz</c> for <see cref="ListenerKind.Leaf"/> and
    /// <see cref="ListenerKind.Route"/>). Returns null while the file is missing or incomplete.
    /// </summary>
    /// <exception cref="InvalidOperationException">The file is complete but lacks a wanted listener.</exception>
    public static Dictionary<ListenerKind, IPEndPoint>? TryRead(string directory, int processId, IReadOnlyCollection<ListenerKind> wanted, HttpClient http, CancellationToken cancellationToken)
    {
        var path = Directory.EnumerateFiles(directory, "*_" + processId.ToString(CultureInfo.InvariantCulture) + ".ports").FirstOrDefault();
        if (path is null)
        {
            return null;
        }

        var listeners = new Dictionary<ListenerKind, IPEndPoint>();
        try
        {
            // nats-server writes the file in place (os.WriteFile): a read can see it half written.
            using var document = JsonDocument.Parse(File.ReadAllText(path));
            foreach (var (kind, key) in new[] { (ListenerKind.Nats, "nats"), (ListenerKind.Http, "monitoring"), (ListenerKind.WebSocket, "websocket") })
            {
                if (document.RootElement.TryGetProperty(key, out var urls) && urls.GetArrayLength() > 0)
                {
                    listeners[kind] = Loopback(new Uri(urls[0].GetString()!).Port);
                }
            }
        }
        catch (Exception ex) when (ex is JsonException or IOException or InvalidOperationException or UriFormatException)
        {
            return null;
        }

        var fromVarz = wanted.Where(k => k is ListenerKind.Leaf or ListenerKind.Route).ToList();
        if (fromVarz.Count > 0)
        {
            if (!listeners.TryGetValue(ListenerKind.Http, out var monitor))
            {
                throw new InvalidOperationException($"the ports file {path} has no monitoring URL, which the leaf node and cluster ports are read from");
            }

            using var varz = Varz(http, monitor, cancellationToken);
            if (varz is null)
            {
                return null;
            }

            foreach (var kind in fromVarz)
            {
                // nats-server's LeafNodeOptsVarz names it port, its ClusterOptsVarz cluster_port.
                var (sectionName, key) = kind == ListenerKind.Leaf ? ("leaf", "port") : ("cluster", "cluster_port");
                var port = varz.RootElement.TryGetProperty(sectionName, out var section) && section.TryGetProperty(key, out var value) ? value.GetInt32() : 0;
                if (port <= 0)
                {
                    return null;
                }

                listeners[kind] = Loopback(port);
            }
        }

        var missing = wanted.Where(k => !listeners.ContainsKey(k)).ToList();
        return missing.Count == 0
            ? listeners
            : throw new InvalidOperationException($"the ports file {path} lacks {string.Join(", ", missing)}: {File.ReadAllText(path)}");
    }

    /// <summary>How long to wait before looking again (short: the restart row times the start to the millisecond).</summary>
    public static void Pause(CancellationToken cancellationToken) => cancellationToken.WaitHandle.WaitOne(PollInterval);

    private static JsonDocument? Varz(HttpClient http, IPEndPoint monitor, CancellationToken cancellationToken)
    {
        try
        {
            return JsonDocument.Parse(http.GetStringAsync(new Uri($"http://{monitor}/varz"), cancellationToken).GetAwaiter().GetResult());
        }
        catch (Exception ex) when (ex is HttpRequestException or JsonException || (ex is TaskCanceledException && !cancellationToken.IsCancellationRequested))
        {
            // Listening but not answering yet (or a request timed out on a loaded machine): look again.
            return null;
        }
    }

    private static IPEndPoint Loopback(int port) => new(IPAddress.Loopback, port);
}
