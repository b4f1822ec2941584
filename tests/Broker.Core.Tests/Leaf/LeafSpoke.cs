using System.Globalization;
using System.Net;
using System.Text;
using Broker.TestKit;

namespace Broker.Core.Tests.Leaf;

/// <summary>One remote of a spoke, written as our options or as nats-server's <c>remotes</c> entry.</summary>
internal sealed record SpokeRemote(string Url)
{
    public string? Account { get; init; }

    public string? Credentials { get; init; }

    public string[] DenyImports { get; init; } = [];

    public string[] DenyExports { get; init; } = [];

    /// <summary>The remote's <c>tls { }</c>: our options, written for nats-server as the same keys.</summary>
    public LeafRemoteTlsOptions? Tls { get; init; }

    /// <summary>The remote's <c>ws_compression</c>.</summary>
    public bool WebSocketCompression { get; init; }
}

/// <summary>
/// The spoke under test: our broker (in-process) or nats-server 2.9.10 (a process) with the same remotes, monitoring
/// on, so the same scenario runs against both and waits on the same /leafz.
/// </summary>
internal sealed class LeafSpoke : IAsyncDisposable
{
    private readonly TestBroker? ours;
    private readonly ReferenceServer? reference;

    private LeafSpoke(TestBroker? ours, ReferenceServer? reference, int httpPort)
    {
        this.ours = ours;
        this.reference = reference;
        HttpPort = httpPort;
    }

    public ServerKind Kind => ours is null ? ServerKind.Reference : ServerKind.Ours;

    public TestBroker? Ours => ours;

    public string ClientUrl => ours?.Url ?? reference!.Url;

    public int HttpPort { get; }

    public string Log => ours is null ? reference!.Log : string.Join(Environment.NewLine, ours.Logs.Entries.Select(e => e.ToString()));

    public static async Task<LeafSpoke> StartAsync(ServerKind kind, params SpokeRemote[] remotes) => await StartAsync(kind, remotes, null, "").ConfigureAwait(false);

    /// <summary>Starts a spoke; <paramref name="configure"/> and <paramref name="referenceConfig"/> add the same settings to each kind.</summary>
    public static async Task<LeafSpoke> StartAsync(ServerKind kind, SpokeRemote[] remotes, Action<BrokerOptions>? configure, string referenceConfig)
    {
        if (kind == ServerKind.Ours)
        {
            var broker = await TestBroker.StartAsync(options =>
            {
                options.Monitoring.Host = "127.0.0.1";
                options.Monitoring.Port = 0;
                configure?.Invoke(options);
                foreach (var remote in remotes)
                {
                    options.LeafNodes.Remotes.Add(new LeafRemoteOptions
                    {
                        Urls = [remote.Url],
                        Account = remote.Account,
                        Credentials = remote.Credentials,
                        DenyImports = [.. remote.DenyImports],
                        DenyExports = [.. remote.DenyExports],
                        Tls = remote.Tls,
                        WebSocketCompression = remote.WebSocketCompression,
                    });
                }
            }).ConfigureAwait(false);
            var monitor = (IPEndPoint)broker.Server.GetEndPoint(BrokerServer.MonitorListenerName);
            return new LeafSpoke(broker, null, monitor.Port);
        }

        var httpPort = Ports.GetFreePort();
        var config = new StringBuilder();
        config.Append(CultureInfo.InvariantCulture, $"http: \"127.0.0.1:{httpPort}\"\n").Append(referenceConfig).Append("\nleafnodes { remotes: [\n");
        foreach (var remote in remotes)
        {
            config.Append(CultureInfo.InvariantCulture, $"  {{ url: \"{remote.Url}\"");
            if (remote.Account is { } account)
            {
                config.Append(CultureInfo.InvariantCulture, $", account: \"{account}\"");
            }

            if (remote.Credentials is { } credentials)
            {
                config.Append(CultureInfo.InvariantCulture, $", credentials: \"{credentials}\"");
            }

            if (remote.DenyImports.Length > 0)
            {
                config.Append(", deny_imports: [").Append(string.Join(", ", remote.DenyImports.Select(s => $"\"{s}\""))).Append(']');
            }

            if (remote.DenyExports.Length > 0)
            {
                config.Append(", deny_exports: [").Append(string.Join(", ", remote.DenyExports.Select(s => $"\"{s}\""))).Append(']');
            }

            if (remote.Tls is { } tls)
            {
                var keys = new[] { ("cert_file", tls.CertFile), ("key_file", tls.KeyFile), ("ca_file", tls.CaFile) }
                    .Where(k => k.Item2 is not null)
                    .Select(k => $"{k.Item1}: \"{k.Item2}\"")
                    .Concat(tls.Insecure ? ["insecure: true"] : []);
                config.Append(", tls: { ").Append(string.Join(", ", keys)).Append(" }");
            }

            if (remote.WebSocketCompression)
            {
                config.Append(", ws_compression: true");
            }

            config.Append(" }\n");
        }

        config.Append("] }\n");
        var server = await ReferenceServer.StartAsync(config.ToString()).ConfigureAwait(false);
        return new LeafSpoke(null, server, httpPort);
    }

    /// <summary>Waits until the spoke has <paramref name="links"/> links and the hub's interest in each of <paramref name="subjects"/>.</summary>
    public Task WaitForLinksAsync(int links, params string[] subjects) => LeafHub.WaitForLeafzAsync(HttpPort, links, subjects, $"the spoke ({Kind})");

    private bool disposed;

    /// <summary>Stops the spoke; a second call does nothing.</summary>
    public async ValueTask DisposeAsync()
    {
        if (disposed)
        {
            return;
        }

        disposed = true;
        if (ours is not null)
        {
            await ours.DisposeAsync().ConfigureAwait(false);
        }

        if (reference is not null)
        {
            await reference.DisposeAsync().ConfigureAwait(false);
        }
    }
}
