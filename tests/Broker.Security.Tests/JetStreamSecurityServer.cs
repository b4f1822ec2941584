using System.Net;
using Broker.Core;
using Broker.JetStream;
using Broker.Storage.FileStore;
using Broker.Storage.MemStore;

namespace Broker.Security.Tests;

/// <summary>Our broker with JetStream on the memory and file stores, or nats-server 2.9.10 with <c>-js</c>, with the same settings.</summary>
internal sealed class JetStreamSecurityServer : IAsyncDisposable
{
    private readonly TempDirectory storeDirectory = new("js-sec-");
    private TestBroker? ours;
    private ReferenceServer? reference;

    public EndPoint EndPoint => ours?.EndPoint ?? reference!.EndPoint;

    public string Url => ours?.Url ?? reference!.Url;

    public TestBroker? Ours => ours;

    /// <summary>
    /// Starts the server; <paramref name="referenceConfig"/> is nats-server's config text, to which a
    /// <c>jetstream { }</c> block with <paramref name="referenceJetStream"/> inside is added.
    /// </summary>
    public static async Task<JetStreamSecurityServer> StartAsync(
        ServerKind kind,
        Action<BrokerOptions>? configure,
        string referenceConfig,
        Action<JetStreamOptions>? configureJetStream = null,
        string referenceJetStream = "")
    {
        var server = new JetStreamSecurityServer();
        if (kind == ServerKind.Ours)
        {
            var options = new JetStreamOptions { StoreDirectory = server.storeDirectory.Path };
            configureJetStream?.Invoke(options);
            server.ours = await TestBroker.StartAsync(configure, [new JetStreamPlugin(options), new MemoryStorePlugin(), new FileStorePlugin()]);
        }
        else
        {
            server.reference = await ReferenceServer.StartAsync(
                referenceConfig + $"\njetstream {{ store_dir: \"{server.storeDirectory.Path}\"\n{referenceJetStream}\n}}\n");
        }

        return server;
    }

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

        storeDirectory.Dispose();
    }
}
