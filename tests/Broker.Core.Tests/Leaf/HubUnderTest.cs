using System.Net;
using Broker.TestKit;

namespace Broker.Core.Tests.Leaf;

/// <summary>
/// The hub under test: our broker (in-process, <c>LeafNodes.Hub</c> on a free port of 127.0.0.1) or nats-server
/// 2.9.10 (<see cref="LeafHub"/>) with the same settings, monitoring on, so a scenario runs against both and waits on
/// the same /leafz.
/// </summary>
internal sealed class HubUnderTest : ILeafHubUnderTest, IAsyncDisposable
{
    private readonly TestBroker? ours;
    private readonly LeafHub? reference;

    private HubUnderTest(TestBroker? ours, LeafHub? reference, int leafPort, int httpPort)
    {
        this.ours = ours;
        this.reference = reference;
        LeafPort = leafPort;
        HttpPort = httpPort;
    }

    public ServerKind Kind => ours is null ? ServerKind.Reference : ServerKind.Ours;

    public TestBroker? Ours => ours;

    public int LeafPort { get; }

    public int HttpPort { get; }

    public string ClientUrl => ours?.Url ?? reference!.ClientUrl;

    public string Log => ours is null ? reference!.Log : string.Join(Environment.NewLine, ours.Logs.Entries.Select(e => e.ToString()));

    /// <summary>The leaf URL, with <paramref name="userInfo"/> (<c>user:pass</c>) when given.</summary>
    public string LeafUrl(string? userInfo = null) => $"nats-leaf://{(userInfo is null ? "" : userInfo + "@")}127.0.0.1:{LeafPort}";

    /// <summary>
    /// Starts a hub; <paramref name="configure"/> adds settings to ours, <paramref name="leafBlock"/> (inside
    /// <c>leafnodes { }</c>) and <paramref name="extra"/> (top level) the same ones to nats-server's.
    /// </summary>
    public static async Task<HubUnderTest> StartAsync(ServerKind kind, Action<BrokerOptions>? configure = null, string leafBlock = "", string extra = "")
    {
        if (kind == ServerKind.Reference)
        {
            var hub = await LeafHub.StartAsync(leafBlock, extra);
            return new HubUnderTest(null, hub, hub.LeafPort, hub.HttpPort);
        }

        var broker = await TestBroker.StartAsync(options =>
        {
            options.Monitoring.Host = "127.0.0.1";
            options.Monitoring.Port = 0;
            options.LeafNodes.Hub.Host = "127.0.0.1";
            options.LeafNodes.Hub.Port = -1;
            configure?.Invoke(options);
        });
        var monitor = (IPEndPoint)broker.Server.GetEndPoint(BrokerServer.MonitorListenerName);
        return new HubUnderTest(broker, null, broker.Server.Core.LeafNodes!.Hub!.EndPoint!.Port, monitor.Port);
    }

    /// <summary>Starts a hub in operator mode under <paramref name="op"/>, its accounts preloaded (ours: a memory resolver).</summary>
    public static Task<HubUnderTest> StartInOperatorModeAsync(ServerKind kind, TestOperator op) =>
        StartAsync(
            kind,
            o =>
            {
                o.Operator.Operators = [op.Jwt];
                o.Operator.Resolver = Broker.Core.Auth.AccountResolverType.Memory;
                foreach (var (key, jwt) in op.AccountJwts)
                {
                    o.Operator.ResolverPreload[key] = jwt;
                }
            },
            extra: op.ConfigLines());

    /// <summary>Waits until the hub has <paramref name="links"/> links, and each subject of <paramref name="subjects"/> in a link's interest.</summary>
    public Task WaitForLinksAsync(int links, params string[] subjects) => LeafHub.WaitForLeafzAsync(HttpPort, links, subjects, $"the hub ({Kind})");

    public Task<System.Text.Json.JsonElement> LeafzAsync() => LeafHub.GetAsync(HttpPort, "/leafz?subs=1");

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
    }
}
