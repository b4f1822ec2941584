using System.Globalization;
using System.Net;
using Broker.Core;
using Broker.Core.Tests.Leaf;
using Broker.Storage.FileStore;
using NATS.Client.Core;

namespace Broker.JetStream.Tests.Leaf;

/// <summary>
/// A spoke with JetStream in its own domain, linked to a nats-server 2.9.10 hub with JetStream in another: our broker
/// (in-process, memory and file stores) or nats-server (a process) with the same <c>jetstream { domain }</c> and
/// <c>leafnodes { remotes }</c>, monitoring on, so one scenario runs against both and waits on the same /leafz.
/// </summary>
internal sealed class DomainSpoke : IAsyncDisposable
{
    public const string HubDomain = "hub";
    public const string EdgeDomain = "edge";

    private readonly TempDirectory store;
    private readonly JetStreamServer? ours;
    private readonly ReferenceServer? reference;

    private DomainSpoke(LeafHub hub, TempDirectory store, JetStreamServer? ours, ReferenceServer? reference, int httpPort)
    {
        Hub = hub;
        this.store = store;
        this.ours = ours;
        this.reference = reference;
        HttpPort = httpPort;
    }

    public LeafHub Hub { get; }

    public ServerKind Kind => ours is null ? ServerKind.Reference : ServerKind.Ours;

    public string Url => ours?.Url ?? reference!.Url;

    public int HttpPort { get; }

    public string Log => ours is null ? reference!.Log : string.Join(Environment.NewLine, ours.Ours!.Logs.Entries.Select(e => e.ToString()));

    /// <summary>
    /// Starts a hub (domain <c>hub</c>, file store in a temporary folder kept across its restarts) and the spoke (domain
    /// <c>edge</c>) linked to it, and waits for the link (<see cref="WaitForLinkAsync"/>).
    /// </summary>
    public static async Task<DomainSpoke> StartAsync(ServerKind kind)
    {
        var spoke = await StartLinkAsync(kind);
        try
        {
            await spoke.WaitForLinkAsync();
            return spoke;
        }
        catch
        {
            await spoke.DisposeAsync();
            throw;
        }
    }

    private static async Task<DomainSpoke> StartLinkAsync(ServerKind kind)
    {
        var store = new TempDirectory("js-leaf-");
        var hubStore = Path.Combine(store.Path, "hub");
        var hub = await LeafHub.StartAsync(extra: $"jetstream {{ store_dir: \"{hubStore}\", domain: {HubDomain} }}");
        var edgeStore = Path.Combine(store.Path, "edge");
        if (kind == ServerKind.Ours)
        {
            var server = await JetStreamServer.StartAsync(
                ServerKind.Ours,
                options => options.Domain = EdgeDomain,
                [new FileStorePlugin()],
                options =>
                {
                    options.Monitoring.Host = "127.0.0.1";
                    options.Monitoring.Port = 0;
                    options.LeafNodes.Remotes.Add(new LeafRemoteOptions { Urls = [hub.LeafUrl()] });
                },
                storeDirectory: edgeStore);
            var monitor = (IPEndPoint)server.Ours!.Server.GetEndPoint(BrokerServer.MonitorListenerName);
            return new DomainSpoke(hub, store, server, null, monitor.Port);
        }

        var httpPort = Ports.GetFreePort();
        var config = string.Create(
            CultureInfo.InvariantCulture,
            $"http: \"127.0.0.1:{httpPort}\"\njetstream {{ store_dir: \"{edgeStore}\", domain: {EdgeDomain} }}\nleafnodes {{ remotes: [ {{ url: \"{hub.LeafUrl()}\" }} ] }}\n");
        var reference = await ReferenceServer.StartAsync(config);
        return new DomainSpoke(hub, store, null, reference, httpPort);
    }

    /// <summary>Waits until both ends show the link, the hub the spoke's domain API and the spoke the hub's.</summary>
    public async Task WaitForLinkAsync(params string[] edgeSubjects)
    {
        await Hub.WaitForLinksAsync(1, ["$JS.edge.API.INFO", "$JS.edge.API.STREAM.>", "$JS.edge.API.$KV.>", .. edgeSubjects]);
        await LeafHub.WaitForLeafzAsync(HttpPort, 1, ["$JS.hub.API.STREAM.>"], $"the spoke ({Kind})");
    }

    public NatsConnection ConnectHub() => new(new NatsOpts { Url = Hub.ClientUrl, RequestTimeout = TimeSpan.FromSeconds(10) });

    public NatsConnection ConnectEdge() => new(new NatsOpts { Url = Url, RequestTimeout = TimeSpan.FromSeconds(10) });

    public async ValueTask DisposeAsync()
    {
        if (ours is not null)
        {
            await ours.DisposeAsync();
        }

        if (reference is not null)
        {
            await reference.DisposeAsync();
        }

        await Hub.DisposeAsync();
        store.Dispose();
    }
}
