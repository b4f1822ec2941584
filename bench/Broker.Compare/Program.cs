using Broker.Compare.Report;
using Broker.Compare.Servers;

namespace Broker.Compare;

/// <summary>
/// <c>dotnet run -c Release --project bench/Broker.Compare -- [--runs N] [--smoke]</c> compares our broker with
/// nats-server; <c>serve -a HOST -p PORT</c> runs the embedded fallback server (started by the harness itself);
/// <c>mqtt [--runs N] [--smoke] [--sessions N] [--rows TEXT] [--host-dll PATH]</c> runs the MQTT rows (those whose name contains TEXT) against nats-server and Mosquitto;
/// <c>soak [options]</c> churns connections and MQTT sessions for minutes while counting every message (see
/// <see cref="Soak.SoakOptions.Usage"/>); <c>storm [options]</c> stalls a hundred subscribers beside fast ones (see
/// <see cref="Storm.StormOptions.Usage"/>).
/// Exit code 0 when every available row ran on both servers, 1 when a row failed, 2 for a bad command line.
/// </summary>
internal static class Program
{
    public static async Task<int> Main(string[] args)
    {
        if (args.Length > 0 && args[0] == "serve")
        {
            return await EmbeddedServer.RunAsync(args[1..]).ConfigureAwait(false);
        }

        if (args.Length > 0 && args[0] == "mqtt")
        {
            // mqtt [--runs N] [--smoke] [--sessions N] [--rows TEXT] [--host-dll PATH]: the MQTT rows against nats-server
            // and Mosquitto (issue 12), or those whose name contains TEXT; PATH as the core rows' --host-dll.
            var runs = args.SkipWhile(a => a != "--runs").Skip(1).Select(int.Parse).FirstOrDefault(3);
            var sessions = args.SkipWhile(a => a != "--sessions").Skip(1).Select(int.Parse).FirstOrDefault(10_000);
            var rows = args.SkipWhile(a => a != "--rows").Skip(1).FirstOrDefault();
            var hostDll = args.SkipWhile(a => a != "--host-dll").Skip(1).FirstOrDefault();
            var smoke = args.Contains("--smoke");
            return Mqtt.MqttCompare.Run(Console.Out, smoke ? 1 : runs, smoke, sessions, CancellationToken.None, rows, hostDll);
        }

        if (args.Length > 0 && args[0] == "soak")
        {
            // soak [--minutes M] [--nats N] [--mqtt N] [--churn N] [--rate N] [--server ours|nats-server|both] (issue 14).
            Soak.SoakOptions soak;
            try
            {
                soak = Soak.SoakOptions.Parse(args[1..]);
            }
            catch (ArgumentException ex)
            {
                await Console.Error.WriteLineAsync(ex.Message + Environment.NewLine + Environment.NewLine + Soak.SoakOptions.Usage).ConfigureAwait(false);
                return 2;
            }

            var results = Soak.SoakRunner.Run(soak, Console.Out, CancellationToken.None);
            return results.All(r => r.Error is null && r.Lost == 0 && r.ConnectFailures == 0) ? 0 : 1;
        }

        if (args.Length > 0 && args[0] == "storm")
        {
            // storm [--stalled N] [--fast N] [--seconds S] [--payload B] [--max-pending B] [--server ...] (issue 14).
            Storm.StormOptions storm;
            try
            {
                storm = Storm.StormOptions.Parse(args[1..]);
            }
            catch (ArgumentException ex)
            {
                await Console.Error.WriteLineAsync(ex.Message + Environment.NewLine + Environment.NewLine + Storm.StormOptions.Usage).ConfigureAwait(false);
                return 2;
            }

            var results = Storm.StormRunner.Run(storm, Console.Out, CancellationToken.None);
            return results.All(r => r.Error is null && r.Lost == 0) ? 0 : 1;
        }

        CompareOptions options;
        try
        {
            options = CompareOptions.Parse(args);
        }
        catch (ArgumentException ex)
        {
            await Console.Error.WriteLineAsync(ex.Message + Environment.NewLine + Environment.NewLine + CompareOptions.Usage).ConfigureAwait(false);
            return 2;
        }

        using var interrupted = new CancellationTokenSource();
        Console.CancelKeyPress += (_, e) =>
        {
            e.Cancel = true;
            interrupted.Cancel();
        };

        return Run(options, Console.Out, interrupted.Token);
    }

    /// <summary>Runs the comparison, prints the tables, and writes the report files unless told not to.</summary>
    public static int Run(CompareOptions options, TextWriter log, CancellationToken cancellationToken) => Run(options, log, cancellationToken, out _);

    /// <inheritdoc cref="Run(CompareOptions, TextWriter, CancellationToken)"/>
    public static int Run(CompareOptions options, TextWriter log, CancellationToken cancellationToken, out CompareReport report)
    {
        ArgumentNullException.ThrowIfNull(options);
        ArgumentNullException.ThrowIfNull(log);
        report = new CompareRunner(options, log).Run(cancellationToken);
        log.WriteLine();
        log.Write(MarkdownReport.Render(report, ReportWriter.ChartFileName));
        if (options.Write)
        {
            var directory = options.OutputDirectory ?? Path.Combine(OurBroker.RepoRoot(), "docs");
            log.WriteLine($"wrote {ReportWriter.Write(directory, report)} and {ReportWriter.ChartFileName}");
        }

        return report.Succeeded ? 0 : 1;
    }
}
