using System.Globalization;
using Broker.Compare.Load;
using Broker.Compare.Rows;
using Broker.Compare.Servers;

namespace Broker.Compare;

/// <summary>
/// The connection-scale row: for each connection count, a fresh process of each server (alternating), its
/// resident memory before and after the idle connections, and the time to connect them all.
/// </summary>
internal sealed partial class CompareRunner
{
    private void RunScale(Report.CompareReport report, CancellationToken cancellationToken)
    {
        var settle = options.Smoke ? TimeSpan.FromMilliseconds(200) : TimeSpan.FromSeconds(1);
        foreach (var connections in options.ScaleCounts)
        {
            var result = new ScaleResult(connections);
            report.Scale.Add(result);
            try
            {
                // The load generator holds every connection, and so does the server (which inherits the limit).
                FileDescriptorLimit.Ensure((ulong)connections + FileDescriptorLimit.Headroom);
            }
            catch (InvalidOperationException ex)
            {
                result.Fail(Side.NatsServer, ex.Message);
                result.Fail(Side.Ours, ex.Message);
                log.WriteLine($"scale-{connections}: {ex.Message}");
                continue;
            }

            for (var run = 1; run <= options.ScaleRuns; run++)
            {
                foreach (var (side, launch) in new[] { (Side.NatsServer, natsLaunch), (Side.Ours, oursLaunch) })
                {
                    try
                    {
                        using var server = ServerProcess.Start(launch, cancellationToken);
                        if (side == Side.Ours && report.OursVersion.Length == 0)
                        {
                            report.OursVersion = VersionOf(server.Info, "broker_version");
                        }

                        // The baseline is the idle server, after its startup work has settled.
                        Task.Delay(settle, cancellationToken).GetAwaiter().GetResult();
                        var measurement = IdleConnections.Run(server.EndPointFor(NatsTransport.Tcp), connections, server.ReadRss, settle, cancellationToken, waitForReturn: !options.Smoke);
                        server.EnsureRunning();
                        result.Add(side, measurement);
                        log.WriteLine(string.Create(CultureInfo.InvariantCulture,
                            $"scale-{connections,-10} {Name(side),-11} run {run}/{options.ScaleRuns}: {measurement.BytesPerConnection / 1024,8:N1} KiB/connection, connected in {measurement.ConnectTime.TotalMilliseconds:N0} ms, {measurement.LeftAboveBaseline:P0} above the baseline after they left"));
                    }
#pragma warning disable CA1031 // A failed run is recorded against its side and the comparison goes on.
                    catch (Exception ex) when (!cancellationToken.IsCancellationRequested)
#pragma warning restore CA1031
                    {
                        result.Fail(side, ex.Message);
                        log.WriteLine($"scale-{connections} {Name(side)} FAILED: {ex.Message}");
                    }
                }
            }
        }
    }
}
