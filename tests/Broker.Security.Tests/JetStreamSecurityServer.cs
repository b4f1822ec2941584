using System.Net;
using Broker.Core;
using Broker.Core.Auth;
using Broker.JetStream;
using Broker.Storage.FileStore;
using Broker.Storage.MemStore;
using NATS.Client.Core;
using NATS.NKeys;

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

    /// <summary>Operator mode with the full resolver in <paramref name="dir"/> (only the system account preloaded), and JetStream.</summary>
    public static Task<JetStreamSecurityServer> StartFullResolverAsync(ServerKind kind, TestOperator op, string dir)
    {
        var system = op.SystemAccount.GetPublicKey();
        return StartAsync(
            kind,
            o =>
            {
                o.Operator.Operators.Add(op.Jwt);
                o.Operator.Resolver = AccountResolverType.Full;
                o.Operator.DirectoryResolver = new DirectoryResolverOptions { Directory = dir };
                o.Operator.ResolverPreload[system] = op.AccountJwts[system];
            },
            $"operator: \"{op.Jwt}\"\nresolver: {{ type: full, dir: \"{dir}\" }}\nresolver_preload: {{ {system}: \"{op.AccountJwts[system]}\" }}\n");
    }

    /// <summary>A NATS.Client.Core connection of a new user of <paramref name="account"/> (a JWT and its seed).</summary>
    public Task<NatsConnection> ConnectAsync(KeyPair account, string name = "user")
    {
        var (user, jwt) = TestOperator.CreateUser(account);
        return NatsClients.ConnectAsync(Url, name, o => o with { AuthOpts = new NatsAuthOpts { Jwt = jwt, Seed = user.GetSeed() } });
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
