using System.Globalization;
using System.Text.Json;
using Broker.Compare.Load;
using Broker.Compare.Load.Client;
using Broker.Compare.Report;
using Broker.Compare.Rows;
using Broker.Compare.Servers;

namespace Broker.Compare;

/// <summary>
/// Runs the comparison: finds both servers, starts a fresh pair on loopback for each row, calibrates a count (the
/// first calibration run is the row's "first run" on a just-started server), then runs it N times on each server,
/// alternating the servers run by run (nats-server, ours, nats-server, ours, ...), so slow drifts of a shared machine
/// hit both alike. Then the connection-scale row on fresh server processes.
/// </summary>
internal sealed partial class CompareRunner(CompareOptions options, TextWriter log)
{
    // A calibration run shorter than this is too noisy to extrapolate from; the count is raised and retried.
    private static readonly TimeSpan MinimumCalibrationTime = TimeSpan.FromMilliseconds(250);

    private const long MaximumCount = 500_000_000;

    // What our host's configuration error says about a feature it refuses until it is built (ConfValueReader.NotYet).
    private const string NotSupportedYet = "not supported yet";

    private ServerLaunch natsLaunch = null!;
    private ServerLaunch oursLaunch = null!;

    // Made by the first row whose configuration needs it, deleted when the run ends.
    private HarnessCertificate? certificate;

    public CompareReport Run(CancellationToken cancellationToken)
    {
        try
        {
            return RunRows(cancellationToken);
        }
        finally
        {
            certificate?.Dispose();
            certificate = null;
        }
    }

    private CompareReport RunRows(CancellationToken cancellationToken)
    {
        var report = new CompareReport { Options = options };
        log.WriteLine($"machine: {report.Machine.Cores} cores, {report.Machine.CpuModel}, load average {report.LoadBefore}");

        var natsPath = NatsServerBinary.Locate(options.NatsServerPath, log);
        report.NatsServerVersion = NatsServerBinary.Version(natsPath);
        natsLaunch = NatsServerBinary.Launch(natsPath, report.NatsServerVersion);
        report.NatsServerDescription = natsLaunch.Description;
        oursLaunch = OurBroker.Choose(options.Ours, options.HostDll, log, cancellationToken, out var fallback);
        report.OursDescription = oursLaunch.Description;
        if (fallback is not null)
        {
            report.Notes.Add($"Our broker ran embedded in a child process because {fallback}.");
        }

        var rows = RowCatalog.All.Where(Selected).ToList();
        foreach (var row in rows)
        {
            var result = new RowResult(row);
            report.Rows.Add(result);
            if (row.IsAvailable && row.Target == RowTarget.Machine)
            {
                RunRow(result, [(Side.Machine, null)], cancellationToken);
            }
        }

        // Fresh servers for every row, so each row's first run is what a just-started server does.
        foreach (var result in report.Rows.Where(r => r.Row.IsAvailable && r.Row.Target == RowTarget.Servers))
        {
            if (result.Row.Link == ServerLink.None)
            {
                RunOnServers([result], AccountsConfig.Apply(result.Row.ServerConfig, options.Accounts), AccountsConfig.Apply(result.Row.OursServerConfig ?? result.Row.ServerConfig, options.Accounts), report, cancellationToken);
            }
            else
            {
                RunLinked(result, report, cancellationToken);
            }
        }

        foreach (var result in report.Rows.Where(r => r.Row.IsAvailable && r.Row.Target == RowTarget.Restart))
        {
            RunRestart(result, cancellationToken);
        }

        RunScale(report, cancellationToken);
        report.LoadAfter = MachineInfo.LoadAverage();
        report.FinishedAt = DateTimeOffset.UtcNow;
        return report;
    }

    private bool Selected(Row row)
        => options.Includes(row.Generator)
            && (options.RowFilter.Count == 0 || options.RowFilter.Any(prefix => row.Id.StartsWith(prefix, StringComparison.Ordinal)));

    /// <summary>
    /// Starts a nats-server with <paramref name="config"/> and one of ours with <paramref name="oursConfig"/> (each
    /// process writes its own file, with its own ports), runs the rows, stops both. A server that does not start fails the rows on its side (ours
    /// refusing a feature it does not have yet marks them not supported instead) and the other side still runs them,
    /// so a row can be proven against nats-server alone.
    /// </summary>
    private void RunOnServers(List<RowResult> rows, string? config, string? oursConfig, CompareReport report, CancellationToken cancellationToken)
    {
        var (nats, ours) = LaunchesFor(rows, config, oursConfig);
        var servers = new Dictionary<Side, ServerProcess>();
        try
        {
            foreach (var (side, launch) in new[] { (Side.NatsServer, nats), (Side.Ours, ours) })
            {
                try
                {
                    servers[side] = ServerProcess.Start(launch, cancellationToken);
                }
                catch (ServerStartException ex)
                {
                    // Ours refuses a feature it does not have yet with a configuration error that says so (the
                    // host's "not supported yet"): reported as such, and the row runs unchanged once it lands.
                    var notYet = side == Side.Ours && ex.Message.Contains(NotSupportedYet, StringComparison.Ordinal);
                    var message = $"did not start on the row's configuration (the other side runs the row alone): {ex.Message}";
                    foreach (var row in rows)
                    {
                        if (notYet)
                        {
                            row.NotSupported[side] = message;
                            log.WriteLine($"{row.Row.Id,-16} {Name(side),-11} NOT SUPPORTED YET: {message}");
                        }
                        else
                        {
                            row.Fail(side, message);
                            log.WriteLine($"{row.Row.Id,-16} {Name(side),-11} FAILED: {message}");
                        }
                    }
                }
            }

            if (servers.TryGetValue(Side.Ours, out var oursProcess))
            {
                report.OursVersion = VersionOf(oursProcess.Info, "broker_version");
            }

            foreach (var row in rows)
            {
                RunWithIdleAccounts(row, servers, cancellationToken);
            }
        }
        finally
        {
            foreach (var server in servers.Values)
            {
                server.Dispose();
            }
        }

        foreach (var row in rows)
        {
            SampleFirstRuns(row, servers.Keys, nats, ours, cancellationToken);
        }
    }

    /// <summary>The launches of both servers with their configurations (null: their defaults).</summary>
    private (ServerLaunch Nats, ServerLaunch Ours) LaunchesFor(List<RowResult> rows, string? config, string? oursConfig)
    {
        // A TLS row's configuration makes the NATS port TLS-only, so every client of these servers (the readiness
        // probe too) must upgrade and pin the certificate.
        var tls = rows.Any(r => r.Row.Transport == NatsTransport.Tls);
        return (WithConfig(natsLaunch, config, tls), WithConfig(oursLaunch, oursConfig, tls));
    }

    private ServerLaunch WithConfig(ServerLaunch launch, string? config, bool tls)
    {
        if (config is null)
        {
            return launch;
        }

        if (HarnessCertificate.IsUsedBy(config))
        {
            certificate ??= HarnessCertificate.Create();
            config = certificate.Substitute(config);
        }

        return launch with { Config = config, TlsCertificate = tls ? certificate?.Certificate : null };
    }

    /// <summary>
    /// Runs <paramref name="row"/> on the servers that started; with <c>--accounts N</c>, first opens each server's
    /// N-1 idle accounts' subscribers and afterwards fails a side whose idle accounts received anything.
    /// </summary>
    private void RunWithIdleAccounts(RowResult row, Dictionary<Side, ServerProcess> servers, CancellationToken cancellationToken)
    {
        var idle = new List<(Side Side, IdleSubscriber Subscriber)>();
        try
        {
            var sides = new List<(Side Side, Dictionary<Side, ServerProcess>? Servers)>();
            foreach (var side in servers.Keys.Order())
            {
                try
                {
                    for (var account = 1; account < options.Accounts; account++)
                    {
                        idle.Add((side, IdleSubscriber.Open(servers[side].EndPointFor(row.Row.Transport), AccountsConfig.IdleUser(account), SubjectsOf(row.Row))));
                    }

                    sides.Add((side, servers));
                }
                catch (Exception ex) when (ex is IOException or System.Net.Sockets.SocketException or InvalidOperationException or TimeoutException or AggregateException)
                {
                    row.Fail(side, "idle accounts: " + ex.Message);
                    log.WriteLine($"{row.Row.Id,-16} {Name(side),-11} FAILED: idle accounts: {ex.Message}");
                }
            }

            if (sides.Count > 0)
            {
                RunRow(row, [.. sides], cancellationToken);
            }

            foreach (var (side, subscriber) in idle)
            {
                try
                {
                    if (subscriber.Finish() is var leaked and > 0)
                    {
                        row.Fail(side, $"isolation: idle account user {subscriber.User} received {leaked:N0} messages");
                    }
                }
                catch (Exception ex) when (ex is IOException or System.Net.Sockets.SocketException or InvalidOperationException or TimeoutException)
                {
                    row.Fail(side, "idle accounts: " + ex.Message);
                }
            }
        }
        finally
        {
            idle.ForEach(i => i.Subscriber.Dispose());
        }
    }

    /// <summary>The subjects the row's runs publish under (RunRow, Calibrate and WarmUp name them), for the idle subscriptions.</summary>
    private List<string> SubjectsOf(Row row)
        => [$"bench.{row.Id}.calibrate", $"bench.{row.Id}.warmup", .. Enumerable.Range(1, options.Runs).Select(run => $"bench.{row.Id}.r{run}")];

    /// <summary>Calibrates the row's count, then alternates the sides run by run.</summary>
    private void RunRow(RowResult result, (Side Side, Dictionary<Side, ServerProcess>? Servers)[] sides, CancellationToken cancellationToken)
    {
        var row = result.Row;
        var workload = row.Workload!();
        var count = options.Smoke ? workload.SmokeCount
            : row.FixedCount is { } fixedCount ? WarmUp(result, workload, sides, fixedCount, cancellationToken)
            : Calibrate(result, workload, sides, cancellationToken);
        result.Count = count;
        if (count == 0)
        {
            return;
        }

        for (var run = 1; run <= options.Runs; run++)
        {
            foreach (var (side, servers) in sides)
            {
                if (TryRun(result, workload, side, servers, count, $"bench.{row.Id}.r{run}", cancellationToken) is { } measurement)
                {
                    result.Add(side, measurement);
                    log.WriteLine(string.Create(CultureInfo.InvariantCulture,
                        $"{row.Id,-16} {Name(side),-11} run {run}/{options.Runs}: {measurement.MessagesPerSecond,14:N0} {row.Unit}/s {measurement.MegabytesPerSecond,9:N1} MB/s{CpuText(measurement)}{LatencyText(measurement)}"));
                }
            }
        }
    }

    /// <summary>
    /// Finds a count that makes the faster side's run last <see cref="CompareOptions.TargetSeconds"/>: runs every
    /// side with a small count (raising it until a run is long enough to extrapolate from), then scales it. These
    /// runs also warm both servers up. Returns 0 when no side could run at all.
    /// </summary>
    private long Calibrate(RowResult result, IWorkload workload, (Side Side, Dictionary<Side, ServerProcess>? Servers)[] sides, CancellationToken cancellationToken)
    {
        var count = workload.CalibrationCount;
        while (true)
        {
            var fastest = TimeSpan.MaxValue;
            foreach (var (side, servers) in sides)
            {
                if (TryRun(result, workload, side, servers, count, $"bench.{result.Row.Id}.calibrate", cancellationToken, calibrating: true) is { } measurement)
                {
                    if (count == workload.CalibrationCount)
                    {
                        result.AddFirst(side, measurement);
                    }

                    fastest = measurement.Elapsed < fastest ? measurement.Elapsed : fastest;
                }
            }

            if (fastest == TimeSpan.MaxValue)
            {
                return 0;
            }

            if (fastest >= MinimumCalibrationTime || count * 4 > MaximumCount)
            {
                var scaled = (long)Math.Ceiling(count * options.TargetSeconds / fastest.TotalSeconds);
                log.WriteLine($"{result.Row.Id,-16} calibrated: {scaled:N0} per run ({count:N0} took {fastest.TotalMilliseconds:N0} ms on the faster side)");
                return Math.Clamp(scaled, count, MaximumCount);
            }

            count *= 4;
        }
    }

    /// <summary>
    /// For a row with a fixed count: one run per side with the calibration count (the row's first run on a
    /// just-started server, and the warm-up calibration would have given), then the fixed count. 0 when no side ran.
    /// </summary>
    private long WarmUp(RowResult result, IWorkload workload, (Side Side, Dictionary<Side, ServerProcess>? Servers)[] sides, long fixedCount, CancellationToken cancellationToken)
    {
        var ran = false;
        foreach (var (side, servers) in sides)
        {
            if (TryRun(result, workload, side, servers, workload.CalibrationCount, $"bench.{result.Row.Id}.warmup", cancellationToken, calibrating: true) is { } measurement)
            {
                result.AddFirst(side, measurement);
                ran = true;
            }
        }

        log.WriteLine($"{result.Row.Id,-16} fixed: {fixedCount:N0} per run");
        return ran ? fixedCount : 0;
    }

    private Measurement? TryRun(RowResult result, IWorkload workload, Side side, Dictionary<Side, ServerProcess>? servers, long count, string subject, CancellationToken cancellationToken, bool calibrating = false)
    {
        var server = servers?[side];
        var hub = linkFirsts?.GetValueOrDefault(side);
        try
        {
            var endPoint = server?.EndPointFor(result.Row.Transport) ?? new NatsEndpoint(new System.Net.IPEndPoint(System.Net.IPAddress.Loopback, 0));
            endPoint = hub is null ? endPoint : LinkEndPoint(result.Row, hub, endPoint);
            var cpuBefore = server?.ReadCpuTime() + (hub?.ReadCpuTime() ?? TimeSpan.Zero);
            var measurement = workload.Run(endPoint, count, subject, cancellationToken);
            server?.EnsureRunning();
            hub?.EnsureRunning();
            return server is null ? measurement : measurement with { ServerCpu = server.ReadCpuTime() + (hub?.ReadCpuTime() ?? TimeSpan.Zero) - cpuBefore };
        }
#pragma warning disable CA1031 // A failed run is recorded against its side and the comparison goes on.
        catch (Exception ex) when (!cancellationToken.IsCancellationRequested)
#pragma warning restore CA1031
        {
            var reason = ex is ConnectionLostException lost && server is not null ? lost.WithServerLog(() => server.OutputTail) : ex.Message;
            var message = (calibrating ? "calibration: " : string.Empty) + reason;
            result.Fail(side, message);
            log.WriteLine($"{result.Row.Id,-16} {Name(side),-11} FAILED: {message}");
            if (servers is not null && servers[side].HasExited)
            {
                // Keep the comparison going: later runs get a fresh server (or fail on their own if it cannot start).
                var dead = servers[side];
                log.WriteLine($"{Name(side)} died: {dead.OutputTail}");
                dead.Dispose();
                try
                {
                    servers[side] = ServerProcess.Start(dead.Launch, cancellationToken);
                }
                catch (ServerStartException restart)
                {
                    log.WriteLine($"{Name(side)} could not be restarted: {restart.Message}");
                }
            }

            return null;
        }
    }

    public static string Name(Side side) => side switch
    {
        Side.NatsServer => "nats-server",
        Side.Ours => "ours",
        _ => "loopback",
    };

    private static string CpuText(Measurement measurement)
        => measurement.ServerCpuNanosecondsPerMessage is { } cpu ? string.Create(CultureInfo.InvariantCulture, $"  server CPU {cpu:N0} ns/msg") : string.Empty;

    private static string LatencyText(Measurement measurement)
        => measurement.Latency is { } latency
            ? string.Create(CultureInfo.InvariantCulture, $"  p50 {latency.P50Microseconds:N0} us  p99 {latency.P99Microseconds:N0} us")
            : string.Empty;

    private static string VersionOf(JsonElement info, string property)
        => info.ValueKind == JsonValueKind.Object && info.TryGetProperty(property, out var value) ? value.ToString() : "unknown";
}
