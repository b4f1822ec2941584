using System.Globalization;
using Broker.Compare.Rows;
using Broker.Compare.Servers;

namespace Broker.Compare;

/// <summary>
/// The first-run samples beyond the row's own pair of servers: <c>--first-runs N</c> starts each server N-1 more
/// times for the row, alternating nats-server and ours, and runs the row's first calibration run once on each fresh
/// process, so the first-run cells are a median with its range instead of one sample of a noisy second.
/// </summary>
internal sealed partial class CompareRunner
{
    private void SampleFirstRuns(RowResult result, IEnumerable<Side> started, ServerLaunch nats, ServerLaunch ours, CancellationToken cancellationToken)
    {
        SampleMore(result, started, nats, ours, cancellationToken);
        if (result.FirstSpreadOf(Side.NatsServer) is { } natsFirst && result.FirstSpreadOf(Side.Ours) is { } oursFirst)
        {
            log.WriteLine(string.Create(CultureInfo.InvariantCulture,
                $"{result.Row.Id,-16} first runs ({oursFirst.Count} fresh starts): nats-server {natsFirst.Median:N0} ({natsFirst.Min:N0}-{natsFirst.Max:N0}), ours {oursFirst.Median:N0} ({oursFirst.Min:N0}-{oursFirst.Max:N0}) {result.Row.Unit}/s, ours / nats-server {result.FirstRatio:0.00}"));
        }
    }

    private void SampleMore(RowResult result, IEnumerable<Side> started, ServerLaunch nats, ServerLaunch ours, CancellationToken cancellationToken)
    {
        // With --accounts the row's first run had the idle accounts' subscribers beside it; fresh starts without
        // them would not be the same first run.
        if (options.FirstRuns <= 1 || options.Accounts > 1 || result.Count == 0 || result.Row.Workload is null)
        {
            return;
        }

        var sides = started.Where(side => result.First.ContainsKey(side)).Order().ToList();
        var workload = result.Row.Workload();
        for (var start = 2; start <= options.FirstRuns; start++)
        {
            foreach (var side in sides)
            {
                ServerProcess server;
                try
                {
                    server = ServerProcess.Start(side == Side.Ours ? ours : nats, cancellationToken);
                }
                catch (ServerStartException ex)
                {
                    result.Fail(side, $"first run {start}: {ex.Message}");
                    log.WriteLine($"{result.Row.Id,-16} {Name(side),-11} FAILED: first run {start}: {ex.Message}");
                    continue;
                }

                var servers = new Dictionary<Side, ServerProcess> { [side] = server };
                try
                {
                    var subject = $"bench.{result.Row.Id}.first{start}";
                    if (TryRun(result, workload, side, servers, workload.CalibrationCount, subject, cancellationToken, calibrating: true) is { } measurement)
                    {
                        result.AddFirst(side, measurement);
                        log.WriteLine(string.Create(CultureInfo.InvariantCulture,
                            $"{result.Row.Id,-16} {Name(side),-11} first run {start}/{options.FirstRuns}: {measurement.MessagesPerSecond,14:N0} {result.Row.Unit}/s{CpuText(measurement)}"));
                    }
                }
                finally
                {
                    servers[side].Dispose();
                }
            }
        }
    }
}
