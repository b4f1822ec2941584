using System.Globalization;
using Broker.Core.Tests.Leaf;
using Broker.Storage.FileStore;
using NATS.Client.Core;

namespace Broker.JetStream.Tests.Leaf;

/// <summary>
/// Two JetStreams joined by a leaf node link, each in its own domain: a hub (domain <c>hub</c>, <c>leafnodes { listen }</c>)
/// and a spoke (domain <c>edge</c>, a remote to the hub), each our broker (in-process, memory and file stores) or
/// nats-server 2.9.10 (a process) with the same settings, monitoring on, so one scenario runs in every pairing and waits
/// on the same /leafz. The leaf and monitoring ports and the file stores stay across <see cref="RestartHubAsync"/> and
/// <see cref="RestartSpokeAsync"/>; the client ports do not (connect again after a restart).
/// </summary>
internal sealed class DomainLink(ServerKind hubKind, ServerKind spokeKind, bool accountHub) : IAsyncDisposable
{
    public const string HubDomain = "hub";
    public const string EdgeDomain = "edge";

    /// <summary>With an account hub: the hub's account with JetStream that its leaf user <c>leaf</c> and client user <c>app</c> bind.</summary>
    public const string HubAccount = "A";

    private readonly TempDirectory store = new("js-leaf-");
    private readonly int leafPort = Ports.GetFreePort();
    private Side? hub;
    private Side? spoke;

    public ServerKind HubKind { get; } = hubKind;

    public ServerKind SpokeKind { get; } = spokeKind;

    /// <summary>The hub's leaf port.</summary>
    public int LeafPort => leafPort;

    public int HubHttpPort => hub!.HttpPort;

    public int SpokeHttpPort => spoke!.HttpPort;

    public string Log => $"hub ({HubKind}):\n{hub?.Log}\nspoke ({SpokeKind}):\n{spoke?.Log}";

    /// <summary>Starts the hub, then the spoke, and waits for the link (<see cref="WaitForLinkAsync"/>).</summary>
    /// <param name="hubKind">The hub's server.</param>
    /// <param name="spokeKind">The spoke's server.</param>
    /// <param name="accountHub">Whether the hub binds the link and its clients to <see cref="HubAccount"/> (users and passwords) rather than <c>$G</c>.</param>
    public static async Task<DomainLink> StartAsync(ServerKind hubKind, ServerKind spokeKind, bool accountHub = false)
    {
        var link = new DomainLink(hubKind, spokeKind, accountHub);
        try
        {
            link.hub = await link.StartHubAsync(Ports.GetFreePort());
            link.spoke = await link.StartSpokeAsync(Ports.GetFreePort());
            await link.WaitForLinkAsync();
            return link;
        }
        catch
        {
            await link.DisposeAsync();
            throw;
        }
    }

    /// <summary>Waits until both ends show the link, the hub the spoke's domain API and the spoke the hub's, with the extra subjects in their interest.</summary>
    public async Task WaitForLinkAsync(string[]? edgeSubjects = null, string[]? hubSubjects = null)
    {
        await WaitForHubInterestAsync(["$JS.edge.API.INFO", "$JS.edge.API.STREAM.>", "$JS.edge.API.$KV.>", .. edgeSubjects ?? []]);
        await WaitForSpokeInterestAsync(["$JS.hub.API.INFO", "$JS.hub.API.STREAM.>", .. hubSubjects ?? []]);
    }

    /// <summary>Waits until the hub's /leafz shows the link with the spoke's interest in <paramref name="subjects"/>.</summary>
    public Task WaitForHubInterestAsync(params string[] subjects) => LeafHub.WaitForLeafzAsync(HubHttpPort, 1, subjects, $"the hub ({HubKind})");

    /// <summary>Waits until the spoke's /leafz shows the link with the hub's interest in <paramref name="subjects"/>.</summary>
    public Task WaitForSpokeInterestAsync(params string[] subjects) => LeafHub.WaitForLeafzAsync(SpokeHttpPort, 1, subjects, $"the spoke ({SpokeKind})");

    public NatsConnection ConnectHub() => new(new NatsOpts
    {
        Url = hub!.Url,
        RequestTimeout = TimeSpan.FromSeconds(10),
        AuthOpts = accountHub ? new NatsAuthOpts { Username = "app", Password = "p" } : NatsAuthOpts.Default,
    });

    public NatsConnection ConnectEdge() => new(new NatsOpts { Url = spoke!.Url, RequestTimeout = TimeSpan.FromSeconds(10) });

    /// <summary>Stops the hub and starts it again (same leaf and monitoring ports, same store).</summary>
    public async Task RestartHubAsync()
    {
        var port = hub!.HttpPort;
        await hub.DisposeAsync();
        hub = await StartHubAsync(port);
    }

    /// <summary>Stops the spoke and starts it again (same monitoring port, same store).</summary>
    public async Task RestartSpokeAsync()
    {
        var port = spoke!.HttpPort;
        await spoke.DisposeAsync();
        spoke = await StartSpokeAsync(port);
    }

    private Task<Side> StartHubAsync(int httpPort)
    {
        var listen = $"listen: \"127.0.0.1:{leafPort.ToString(CultureInfo.InvariantCulture)}\"";
        var config = accountHub
            ? $"accounts {{ {HubAccount}: {{ jetstream: enabled, users: [ {{ user: app, password: p }} ] }} }}\nleafnodes {{ {listen}, authorization {{ users: [ {{ user: leaf, password: p, account: {HubAccount} }} ] }} }}"
            : $"leafnodes {{ {listen} }}";
        return StartSideAsync(HubKind, HubDomain, httpPort, config, options =>
        {
            options.LeafNodes.Hub.Host = "127.0.0.1";
            options.LeafNodes.Hub.Port = leafPort;
            if (accountHub)
            {
                options.Accounts.Add(new Broker.Core.Auth.AccountOptions
                {
                    Name = HubAccount,
                    Users = [new Broker.Core.Auth.UserOptions { User = "app", Password = "p" }],
                    JetStream = new Broker.Core.Auth.AccountJetStreamOptions(),
                });
                options.LeafNodes.Hub.Users = [new Broker.Core.LeafUserOptions { User = "leaf", Password = "p", Account = HubAccount }];
            }
        });
    }

    private Task<Side> StartSpokeAsync(int httpPort)
    {
        var url = $"nats-leaf://{(accountHub ? "leaf:p@" : "")}127.0.0.1:{leafPort.ToString(CultureInfo.InvariantCulture)}";
        return StartSideAsync(SpokeKind, EdgeDomain, httpPort, $"leafnodes {{ remotes: [ {{ url: \"{url}\" }} ] }}", options =>
            options.LeafNodes.Remotes.Add(new Broker.Core.LeafRemoteOptions { Urls = [url] }));
    }

    private async Task<Side> StartSideAsync(ServerKind kind, string domain, int httpPort, string leafBlock, Action<Broker.Core.BrokerOptions> leafOptions)
    {
        var directory = Path.Combine(store.Path, domain);
        if (kind == ServerKind.Ours)
        {
            var server = await JetStreamServer.StartAsync(
                ServerKind.Ours,
                options => options.Domain = domain,
                [new FileStorePlugin()],
                options =>
                {
                    options.Monitoring.Host = "127.0.0.1";
                    options.Monitoring.Port = httpPort;
                    leafOptions(options);
                },
                storeDirectory: directory);
            return new Side(server, null, httpPort);
        }

        var config = string.Create(
            CultureInfo.InvariantCulture,
            $"http: \"127.0.0.1:{httpPort}\"\njetstream {{ store_dir: \"{directory}\", domain: {domain} }}\n{leafBlock}\n");
        return new Side(null, await ReferenceServer.StartAsync(config), httpPort);
    }

    public async ValueTask DisposeAsync()
    {
        // The spoke first, so it does not dial a hub that is gone.
        foreach (var side in new[] { spoke, hub })
        {
            await (side?.DisposeAsync() ?? ValueTask.CompletedTask);
        }

        store.Dispose();
    }

    // One server of the link: ours or nats-server.
    private sealed record Side(JetStreamServer? Ours, ReferenceServer? Reference, int HttpPort) : IAsyncDisposable
    {
        public string Url => Ours?.Url ?? Reference!.Url;

        public string Log => Ours is null ? Reference!.Log : string.Join(Environment.NewLine, Ours.Ours!.Logs.Entries.Select(e => e.ToString()));

        public ValueTask DisposeAsync() => ((IAsyncDisposable?)Ours ?? Reference!).DisposeAsync();
    }
}
