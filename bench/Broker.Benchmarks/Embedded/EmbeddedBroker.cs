using System.Text;
using Broker.Core;
using Broker.Core.Internal;
using Broker.Core.Internal.Clients;
using Microsoft.Extensions.Logging.Abstractions;

namespace Broker.Benchmarks.Embedded;

/// <summary>
/// The broker core without sockets (Garnet's embedded benchmarks): real <see cref="NatsClient"/>s over
/// <see cref="InMemoryConnection"/>s, connected and subscribed through the protocol, plus a
/// <see cref="BenchPublisher"/> that drives the routing path on the benchmark thread.
/// </summary>
internal sealed class EmbeddedBroker : IAsyncDisposable
{
    private static readonly TimeSpan SetupTimeout = TimeSpan.FromSeconds(10);

    private readonly List<ConnectedClient> clients = [];
    private readonly CancellationTokenSource stopping = new();

    public EmbeddedBroker(BrokerOptions? options = null)
    {
        options ??= new BrokerOptions();

        // The first server PING comes after two seconds whatever the interval; a long interval keeps the benchmark
        // peers (which never answer) far from a stale-connection close during a long run.
        options.PingInterval = TimeSpan.FromHours(1);
        Core = new BrokerCore(options, NullLoggerFactory.Instance);
        Core.ConfigureInfo("127.0.0.1", 4222, "benchmark");
        Publisher = new BenchPublisher(Core);
    }

    public BrokerCore Core { get; }

    public BenchPublisher Publisher { get; }

    /// <summary>
    /// Connects a NATS client, sends CONNECT, the given SUB lines and a PING, and waits for the PONG, so the
    /// subscriptions are in the index when this returns.
    /// </summary>
    public ConnectedClient Connect(bool headers, params string[] subscribeLines) => ConnectAs(null, headers, subscribeLines);

    /// <summary>As <see cref="Connect"/>, authenticating as <paramref name="user"/> (its password is its name) when given.</summary>
    public ConnectedClient ConnectAs(string? user, bool headers, params string[] subscribeLines)
    {
        var connection = new InMemoryConnection();
        var client = new NatsClient(Core, connection);
        var run = client.RunAsync(stopping.Token);
        var connected = new ConnectedClient(client, connection, run);
        clients.Add(connected);

        var setup = new StringBuilder()
            .Append("CONNECT {\"verbose\":false,\"pedantic\":false,\"headers\":").Append(headers ? "true" : "false")
            .Append(user is null ? "" : $",\"user\":\"{user}\",\"pass\":\"{user}\"").Append("}\r\n");
        foreach (var line in subscribeLines)
        {
            setup.Append(line).Append("\r\n");
        }

        setup.Append("PING\r\n");
        var write = connection.PeerInput.WriteAsync(Encoding.ASCII.GetBytes(setup.ToString()));
        if (!write.IsCompleted)
        {
            write.AsTask().GetAwaiter().GetResult();
        }

        connection.ReadUntilAsync("PONG\r\n", SetupTimeout).GetAwaiter().GetResult();
        return connected;
    }

    /// <summary>Drains every connected client's output; returns the total byte count.</summary>
    public long DrainAll()
    {
        long total = 0;
        foreach (var client in clients)
        {
            total += client.Connection.Drain();
        }

        return total;
    }

    public async ValueTask DisposeAsync()
    {
        await stopping.CancelAsync().ConfigureAwait(false);
        foreach (var client in clients)
        {
            // Ending the peer's input ends the read loop; the client then closes and completes its output.
            await client.Connection.PeerInput.CompleteAsync().ConfigureAwait(false);
            await client.Run.WaitAsync(SetupTimeout).ConfigureAwait(false);
            await client.Connection.DisposeAsync().ConfigureAwait(false);
        }

        stopping.Dispose();
    }

    /// <summary>A client of the embedded broker and the connection the benchmark drives it through.</summary>
    internal sealed record ConnectedClient(NatsClient Client, InMemoryConnection Connection, Task Run);
}
