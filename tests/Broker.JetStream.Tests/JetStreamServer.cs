using Broker.Abstractions;
using Broker.JetStream;
using Broker.Storage.MemStore;
using NATS.Client.Core;
using NATS.Client.JetStream;

namespace Broker.JetStream.Tests;

/// <summary>Our broker with JetStream and the memory store (in-process, port 0), or nats-server 2.9.10 with -js.</summary>
internal sealed class JetStreamServer : IAsyncDisposable
{
    private readonly TempDirectory? ownStore;
    private readonly string storeDirectory;

    private JetStreamServer(ServerKind kind, string? storeDirectory)
    {
        Kind = kind;
        ownStore = storeDirectory is null ? new TempDirectory("js-test-") : null;
        this.storeDirectory = storeDirectory ?? ownStore!.Path;
    }

    public ServerKind Kind { get; }

    public TestBroker? Ours { get; private set; }

    public ReferenceServer? Reference { get; private set; }

    public string Url => Ours?.Url ?? Reference!.Url;

    public System.Net.EndPoint EndPoint => Ours?.EndPoint ?? Reference!.EndPoint;

    /// <param name="kind">Which server.</param>
    /// <param name="configure">Changes to our broker's JetStream options.</param>
    /// <param name="extraPlugins">More plugins for our broker (the file store, ...).</param>
    /// <param name="broker">Adjusts our broker's options; <paramref name="referenceConfig"/> says the same to nats-server.</param>
    /// <param name="referenceConfig">A configuration file's text for nats-server (JetStream is turned on by its flags).</param>
    /// <param name="storeDirectory">The store folder, kept by the caller across restarts; null for a temporary one.</param>
    public static async Task<JetStreamServer> StartAsync(
        ServerKind kind = ServerKind.Ours,
        Action<JetStreamOptions>? configure = null,
        IEnumerable<IBrokerPlugin>? extraPlugins = null,
        Action<Broker.Core.BrokerOptions>? broker = null,
        string? referenceConfig = null,
        string? storeDirectory = null)
    {
        var server = new JetStreamServer(kind, storeDirectory);
        if (kind == ServerKind.Ours)
        {
            var options = new JetStreamOptions { StoreDirectory = server.storeDirectory };
            configure?.Invoke(options);
            server.Ours = await TestBroker.StartAsync(broker, [new JetStreamPlugin(options), new MemoryStorePlugin(), .. extraPlugins ?? []]);
        }
        else
        {
            server.Reference = await ReferenceServer.StartAsync(referenceConfig, "-js", "-sd", server.storeDirectory);
        }

        return server;
    }

    public NatsConnection Connect() => new(new NatsOpts { Url = Url, RequestTimeout = TimeSpan.FromSeconds(10) });

    public async Task<(NatsConnection Connection, NatsJSContext Js)> ConnectJetStreamAsync()
    {
        var connection = Connect();
        await connection.ConnectAsync();
        return (connection, new NatsJSContext(connection));
    }

    public async ValueTask DisposeAsync()
    {
        if (Ours is not null)
        {
            await Ours.DisposeAsync();
        }

        if (Reference is not null)
        {
            await Reference.DisposeAsync();
        }

        ownStore?.Dispose();
    }
}
