using System.Diagnostics;
using Broker.Compare.Load;
using Broker.Compare.Load.Client;
using Broker.Compare.Servers;
using Xunit.Abstractions;

namespace Broker.Bench.Tests.Compare;

/// <summary>
/// A NATS.Client.Core run whose connection the server closes fails at once, saying which connection, by which side
/// and why, where NATS.Client.Core on its own reconnects under a new cid and the run waited for the messages lost
/// meanwhile until its 2-minute deadline. The servers run with a max_pending smaller than one message, so each closes
/// the subscriber as a slow consumer on its first delivery.
/// </summary>
public sealed class CoreConnectionLossTests(ITestOutputHelper output)
{
    private const string TinyMaxPending = "max_pending: 1024\nmax_payload: 1024\n";

    [Theory(Timeout = 60_000)]
    [InlineData("ours", "tcp")]
    [InlineData("ours", "ws")]
    [InlineData("ours", "tls")]
    [InlineData("nats-server", "tcp")]
    [InlineData("nats-server", "tls")]
    public async Task A_subscriber_the_server_closes_fails_the_run_at_once_with_the_reason(string side, string scheme)
    {
        var transport = scheme switch { "ws" => NatsTransport.WebSocket, "tls" => NatsTransport.Tls, _ => NatsTransport.Tcp };
        using var log = new StringWriter();
        using var certificate = HarnessCertificate.Create();
        var launch = side == "ours" ? OurBroker.HostLaunch(OurBroker.LocateHost(null, log)) : NatsLaunch(log);
        var config = TinyMaxPending + transport switch
        {
            NatsTransport.WebSocket => $"websocket {{ host: \"127.0.0.1\", port: {ServerLaunch.WebSocketPortPlaceholder}, no_tls: true }}\n",
            NatsTransport.Tls => $"tls {{ cert_file: \"{certificate.CertFile}\", key_file: \"{certificate.KeyFile}\" }}\n",
            _ => string.Empty,
        };
        var tls = transport == NatsTransport.Tls ? certificate.Certificate : null;
        using var server = ServerProcess.Start(launch with { Config = config, TlsCertificate = tls }, CancellationToken.None);
        var workload = new CorePubSubWorkload(payloadSize: 1024, publishers: 1, subscribers: 1);

        var elapsed = Stopwatch.StartNew();
        var failure = await Task.Run(() => Assert.Throws<ConnectionLostException>(() => workload.Run(server.EndPointFor(transport), 100_000, "bench.lost", CancellationToken.None)));
        elapsed.Stop();
        var message = failure.WithServerLog(() => server.OutputTail);
        output.WriteLine($"{side} {transport}: failed after {elapsed.ElapsedMilliseconds} ms: {message}");

        Assert.True(elapsed.Elapsed < TimeSpan.FromSeconds(15), $"the run failed only after {elapsed.Elapsed}");
        Assert.StartsWith($"connection subscriber-0 (cid:{failure.ClientId}) was disconnected: ", failure.Message, StringComparison.Ordinal);
        Assert.Contains(" by the server", failure.Message, StringComparison.Ordinal);
        Assert.Contains("slow consumer", message, StringComparison.OrdinalIgnoreCase);
    }

    [Theory(Timeout = 60_000)]
    [InlineData("ours")]
    [InlineData("nats-server")]
    public async Task The_servers_error_before_it_closes_is_the_reason_given(string side)
    {
        using var log = new StringWriter();
        var launch = side == "ours" ? OurBroker.HostLaunch(OurBroker.LocateHost(null, log)) : NatsLaunch(log);
        using var server = ServerProcess.Start(launch with { Config = "max_control_line: 512\n" }, CancellationToken.None);
        var workload = new CorePubSubWorkload(payloadSize: 16, publishers: 1, subscribers: 1);

        // The subscriber's SUB line passes max_control_line: the server answers -ERR and closes it.
        var failure = await Task.Run(() => Assert.Throws<ConnectionLostException>(() => workload.Run(server.EndPointFor(NatsTransport.Tcp), 1_000, "bench." + new string('x', 600), CancellationToken.None)));
        output.WriteLine($"{side}: {failure.WithServerLog(() => server.OutputTail)}");

        Assert.StartsWith($"connection subscriber-0 (cid:{failure.ClientId}) was disconnected: ", failure.Message, StringComparison.Ordinal);
        Assert.EndsWith("the server's -ERR: 'maximum control line exceeded'", failure.Message, StringComparison.OrdinalIgnoreCase);
    }

    private static ServerLaunch NatsLaunch(TextWriter log)
    {
        var path = NatsServerBinary.Locate(null, log);
        return NatsServerBinary.Launch(path, NatsServerBinary.Version(path));
    }
}
