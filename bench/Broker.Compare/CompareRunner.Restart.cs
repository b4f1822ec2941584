using System.Globalization;
using Broker.Compare.Load;
using Broker.Compare.Rows;
using Broker.Compare.Servers;

namespace Broker.Compare;

/// <summary>
/// The restart row: each server started with <c>-js -sd &lt;its own directory&gt;</c> and its defaults, a file stream
/// filled (<c>--restart-messages</c> of 1 KiB, 1 GB by default), the server stopped with SIGTERM; then, alternating
/// the servers run by run, started again on the same directory and timed until STREAM.INFO shows every message, and
/// stopped again. Server CPU is the new process's whole CPU time at that moment (its startup and recovery).
/// </summary>
internal sealed partial class CompareRunner
{
    private static readonly TimeSpan StopTimeout = TimeSpan.FromMinutes(1);

    private void RunRestart(RowResult result, CancellationToken cancellationToken)
    {
        var workload = (StreamRestartWorkload)result.Row.Workload!();
        var count = options.Smoke ? workload.SmokeCount : options.RestartMessages;
        result.Count = count;
        var root = Path.Combine(Path.GetTempPath(), $"broker-compare-{Environment.ProcessId}-restart-{Guid.NewGuid():N}");
        var launches = new Dictionary<Side, ServerLaunch>
        {
            [Side.NatsServer] = WithStoreDirectory(natsLaunch, Path.Combine(root, "nats-server")),
            [Side.Ours] = WithStoreDirectory(oursLaunch, Path.Combine(root, "ours")),
        };
        try
        {
            var filled = new List<Side>();
            foreach (var (side, launch) in launches)
            {
                try
                {
                    using var server = ServerProcess.Start(launch, cancellationToken);
                    var fill = workload.Run(server.EndPointFor(NatsTransport.Tcp), count, StreamRestartWorkload.Subject, cancellationToken);
                    server.Stop(StopTimeout);
                    filled.Add(side);
                    log.WriteLine(string.Create(CultureInfo.InvariantCulture,
                        $"{result.Row.Id,-16} {Name(side),-11} filled {count:N0} x {StreamRestartWorkload.PayloadSize} B in {fill.Elapsed.TotalSeconds:N1} s ({fill.MessagesPerSecond:N0} msgs/s)"));
                }
#pragma warning disable CA1031 // A failed run is recorded against its side and the comparison goes on.
                catch (Exception ex) when (!cancellationToken.IsCancellationRequested)
#pragma warning restore CA1031
                {
                    result.Fail(side, "fill: " + ex.Message);
                    log.WriteLine($"{result.Row.Id,-16} {Name(side),-11} FAILED: fill: {ex.Message}");
                }
            }

            for (var run = 1; run <= options.Runs; run++)
            {
                foreach (var side in filled)
                {
                    MeasureRestart(result, side, launches[side], count, run, cancellationToken);
                }
            }
        }
        finally
        {
            if (Directory.Exists(root))
            {
                Directory.Delete(root, recursive: true);
            }
        }
    }

    private void MeasureRestart(RowResult result, Side side, ServerLaunch launch, long count, int run, CancellationToken cancellationToken)
    {
        try
        {
            using var server = ServerProcess.Start(launch, cancellationToken);
            var elapsed = StreamRestartWorkload.WaitUntilRecovered(server.EndPointFor(NatsTransport.Tcp), server.StartedTimestamp, count, cancellationToken);
            var cpu = server.ReadCpuTime();
            server.Stop(StopTimeout);
            var measurement = new Measurement(count, count * StreamRestartWorkload.PayloadSize, elapsed) { ServerCpu = cpu };
            result.Add(side, measurement);
            log.WriteLine(string.Create(CultureInfo.InvariantCulture,
                $"{result.Row.Id,-16} {Name(side),-11} run {run}/{options.Runs}: ready with {count:N0} messages {elapsed.TotalMilliseconds:N0} ms after start ({measurement.MessagesPerSecond:N0} msgs/s){CpuText(measurement)}"));
        }
#pragma warning disable CA1031 // A failed run is recorded against its side and the comparison goes on.
        catch (Exception ex) when (!cancellationToken.IsCancellationRequested)
#pragma warning restore CA1031
        {
            result.Fail(side, ex.Message);
            log.WriteLine($"{result.Row.Id,-16} {Name(side),-11} FAILED: {ex.Message}");
        }
    }

    /// <summary>The launch with JetStream on and its store in <paramref name="directory"/>, by command line (no file).</summary>
    private static ServerLaunch WithStoreDirectory(ServerLaunch launch, string directory)
        => launch with { Arguments = [.. launch.Arguments, "-js", "-sd", directory], Config = null };
}
