using System.Globalization;
using System.Net;
using System.Net.Http;
using System.Text;
using System.Text.Json;
using Broker.Core.Tests.Leaf;
using Broker.TestKit;

namespace Broker.Core.Tests.Routes;

/// <summary>
/// One cluster member on 127.0.0.1: our broker (in-process) or nats-server 2.9.10 (a process), with the same
/// <c>cluster { }</c> (name, route port, routes, authorization, and the <see cref="RouteSetup"/> given: TLS, permissions,
/// advertise) and monitoring on, so tests wait on /routez.
/// <see cref="RestartAsync"/> keeps the route port.
/// </summary>
internal sealed class ClusterNode : IAsyncDisposable
{
    private readonly ServerKind kind;
    private readonly string name;
    private readonly string[] routes;
    private readonly (string User, string Password)? auth;
    private readonly Action<BrokerOptions>? configure;
    private readonly RouteSetup? setup;
    private readonly string referenceConfig;
    private TestBroker? ours;
    private ReferenceServer? reference;

    private ClusterNode(ServerKind kind, string name, int clusterPort, string[] routes, (string User, string Password)? auth, Action<BrokerOptions>? configure, RouteSetup? setup, string referenceConfig)
    {
        this.setup = setup;
        this.configure = configure;
        this.referenceConfig = referenceConfig;
        this.kind = kind;
        this.name = name;
        ClusterPort = clusterPort;
        this.routes = routes;
        this.auth = auth;
    }

    public ServerKind Kind => kind;

    public string Name => name;

    public int ClusterPort { get; }

    public int HttpPort { get; private set; }

    public TestBroker? Ours => ours;

    public string ClientUrl => ours?.Url ?? reference!.Url;

    /// <summary>This member's route URL, with <paramref name="userInfo"/> (<c>user:pass</c>) when given.</summary>
    public string RouteUrl(string? userInfo = null) => $"nats-route://{(userInfo is null ? "" : userInfo + "@")}127.0.0.1:{ClusterPort.ToString(CultureInfo.InvariantCulture)}";

    public string Log => ours is null ? reference!.Log : string.Join(Environment.NewLine, ours.Logs.Entries.Select(e => e.ToString()));

    /// <summary>
    /// Starts a member; <paramref name="configure"/> adjusts our broker's options (ours only), <paramref name="referenceConfig"/>
    /// adds the same settings to nats-server's configuration (top level).
    /// </summary>
    public static async Task<ClusterNode> StartAsync(ServerKind kind, string name, string[]? routes = null, (string User, string Password)? auth = null, Action<BrokerOptions>? configure = null, RouteSetup? setup = null, string referenceConfig = "", int? clusterPort = null)
    {
        var node = new ClusterNode(kind, name, clusterPort ?? Ports.GetFreePort(), routes ?? [], auth, configure, setup, referenceConfig);
        await node.StartAsync().ConfigureAwait(false);
        return node;
    }

    private async Task StartAsync()
    {
        if (kind == ServerKind.Ours)
        {
            ours = await TestBroker.StartAsync(options =>
            {
                options.ServerName = name;
                options.Monitoring.Host = "127.0.0.1";
                options.Monitoring.Port = 0;
                options.Cluster.Name = "C";
                options.Cluster.Host = "127.0.0.1";
                options.Cluster.Port = ClusterPort;
                options.Cluster.Routes = [.. routes];
                options.Cluster.Username = auth?.User;
                options.Cluster.Password = auth?.Password;
                setup?.Apply(options.Cluster, ClusterPort);
                configure?.Invoke(options);
            }).ConfigureAwait(false);
            HttpPort = ((IPEndPoint)ours.Server.GetEndPoint(BrokerServer.MonitorListenerName)).Port;
            return;
        }

        HttpPort = HttpPort == 0 ? Ports.GetFreePort() : HttpPort;
        var config = new StringBuilder();
        // debug: nats-server then logs each route it makes, refuses as a duplicate or loses (shown when a wait fails).
        config.Append(CultureInfo.InvariantCulture, $"server_name: {name}\nhttp: \"127.0.0.1:{HttpPort}\"\ndebug: true\n");
        config.Append(CultureInfo.InvariantCulture, $"cluster {{\n  name: C\n  listen: \"127.0.0.1:{ClusterPort}\"\n");
        if (routes.Length > 0)
        {
            config.Append("  routes: [").Append(string.Join(", ", routes.Select(r => $"\"{r}\""))).Append("]\n");
        }

        if (auth is { } credentials)
        {
            config.Append(CultureInfo.InvariantCulture, $"  authorization {{ user: {credentials.User}, password: {credentials.Password} }}\n");
        }

        config.Append(setup?.Conf(ClusterPort) ?? "").Append("}\n").Append(referenceConfig).Append('\n');
        reference = await ReferenceServer.StartAsync(config.ToString()).ConfigureAwait(false);
    }

    /// <summary>Stops the member and starts it again on the same route port (a new server id).</summary>
    public async Task RestartAsync()
    {
        await StopAsync().ConfigureAwait(false);
        await StartAsync().ConfigureAwait(false);
    }

    public async Task StopAsync()
    {
        if (ours is not null)
        {
            await ours.DisposeAsync().ConfigureAwait(false);
            ours = null;
        }

        if (reference is not null)
        {
            await reference.DisposeAsync().ConfigureAwait(false);
            reference = null;
        }
    }

    public Task<JsonElement> RoutezAsync() => LeafHub.GetAsync(HttpPort, "/routez?subs=1");

    /// <summary>
    /// Polls /routez?subs=1 until there are <paramref name="routes"/> routes and each of <paramref name="subjects"/> in
    /// their interest; a failure shows the member's last log lines (how its routes came and went).
    /// </summary>
    public async Task WaitForRoutesAsync(int routes, params string[] subjects)
    {
        try
        {
            await WaitForRoutesOnlyAsync(routes, subjects).ConfigureAwait(false);
        }
        catch (Xunit.Sdk.XunitException ex)
        {
            var tail = Log.Split(Environment.NewLine).TakeLast(60);
            throw new Xunit.Sdk.XunitException(ex.Message + Environment.NewLine + "log of " + name + ":" + Environment.NewLine + string.Join(Environment.NewLine, tail));
        }
    }

    private Task WaitForRoutesOnlyAsync(int routes, params string[] subjects) =>
        Eventually.AssertAsync(
            async () =>
            {
                JsonElement routez;
                try
                {
                    routez = await RoutezAsync().ConfigureAwait(false);
                }
                catch (HttpRequestException)
                {
                    return false;
                }

                if (routez.GetProperty("num_routes").GetInt32() != routes)
                {
                    return false;
                }

                var all = routez.GetProperty("routes").EnumerateArray()
                    .SelectMany(r => r.TryGetProperty("subscriptions_list", out var list) && list.ValueKind == JsonValueKind.Array ? list.EnumerateArray().Select(s => s.GetString()!) : [])
                    .ToHashSet(StringComparer.Ordinal);
                return subjects.All(all.Contains);
            },
            $"{name} ({kind}) to have {routes} route(s) with interest in [{string.Join(", ", subjects)}]",
            TimeSpan.FromSeconds(20));

    /// <summary>Polls /routez?subs=1 until no route shows interest in <paramref name="subject"/>.</summary>
    public Task WaitForNoInterestAsync(string subject) =>
        Eventually.AssertAsync(
            async () =>
            {
                var routez = await RoutezAsync().ConfigureAwait(false);
                return !routez.GetProperty("routes").EnumerateArray()
                    .Any(r => r.TryGetProperty("subscriptions_list", out var list) && list.ValueKind == JsonValueKind.Array && list.EnumerateArray().Any(s => s.GetString() == subject));
            },
            $"{name} ({kind}) to have no route interest in {subject}",
            TimeSpan.FromSeconds(20));

    public ValueTask DisposeAsync() => new(StopAsync());
}

/// <summary>
/// More of a member's <c>cluster { }</c>, the same for both kinds: the lines nats-server's file gets (given the route
/// port) and what they set on our broker's <see cref="ClusterOptions"/>.
/// </summary>
internal sealed record RouteSetup(Func<int, string> Conf, Action<ClusterOptions, int> Apply)
{
    /// <summary>Route TLS with the test CA's member certificate, trusting <paramref name="caFile"/>.</summary>
    public static RouteSetup Tls(string caFile, bool insecure = false)
    {
        var certificates = TestCertificates.Shared;
        return new RouteSetup(
            _ => $"  tls {{ cert_file: \"{certificates.NodeCertFile}\", key_file: \"{certificates.NodeKeyFile}\", ca_file: \"{caFile}\"{(insecure ? ", insecure: true" : "")}, timeout: 2 }}\n",
            (cluster, _) => cluster.Tls = new LeafRemoteTlsOptions { CertFile = certificates.NodeCertFile, KeyFile = certificates.NodeKeyFile, CaFile = caFile, Insecure = insecure });
    }
}
