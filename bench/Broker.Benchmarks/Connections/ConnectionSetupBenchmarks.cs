using BenchmarkDotNet.Attributes;
using Broker.Benchmarks.Embedded;
using Broker.Core.Internal.Clients;

namespace Broker.Benchmarks.Connections;

/// <summary>
/// What a NATS connection costs the broker to set up and take down, without the socket (issues 24 and 25): a
/// <see cref="NatsClient"/> over an <see cref="InMemoryConnection"/> receives INFO, then CONNECT, one SUB and a PING
/// in one read (what the connection-scale row's clients send), answers PONG, and closes when its input ends. The
/// schedulers are inline, so all of it runs on the benchmark thread and every byte it allocates is counted: the
/// client and its collaborators, INFO, the subscription, the keep-alive timer, the read loop's state machine, and the
/// in-memory connection's own two pipes.
/// </summary>
[MemoryDiagnoser]
public class ConnectionSetupBenchmarks
{
    private static readonly byte[] Setup = "CONNECT {\"verbose\":false,\"pedantic\":false,\"name\":\"idle\"}\r\nSUB bench.idle.1 1\r\nPING\r\n"u8.ToArray();

    private EmbeddedBroker broker = null!;

    [GlobalSetup]
    public void GlobalSetup() => broker = new EmbeddedBroker();

    [GlobalCleanup]
    public void Cleanup() => broker.DisposeAsync().AsTask().GetAwaiter().GetResult();

    /// <summary>One connection from accept to close: INFO, CONNECT + SUB + PING answered, input ended.</summary>
    [Benchmark]
    public long ConnectSubscribePingClose()
    {
        var connection = new InMemoryConnection();
        var client = new NatsClient(broker.Core, connection);
        var run = client.RunAsync(CancellationToken.None);
        var write = connection.PeerInput.WriteAsync(Setup);
        if (!write.IsCompleted)
        {
            write.AsTask().GetAwaiter().GetResult();
        }

        var sent = connection.Drain();
        connection.PeerInput.Complete();
        run.GetAwaiter().GetResult();
        sent += connection.Drain();
        connection.DisposeAsync().AsTask().GetAwaiter().GetResult();
        return sent;
    }
}
