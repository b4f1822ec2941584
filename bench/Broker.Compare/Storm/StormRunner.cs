using System.Diagnostics;
using System.Globalization;
using System.Text.Json;
using Broker.Compare.Load;
using Broker.Compare.Mqtt;
using Broker.Compare.Report;
using Broker.Compare.Servers;
using Broker.Compare.Soak;

namespace Broker.Compare.Storm;

/// <summary>
/// The slow-consumer storm (issue 14): per server, a fresh process on the same nats-server configuration (NATS,
/// MQTT, WebSocket, monitoring, <c>max_pending</c>); fast subscribers of each protocol read everything a publisher
/// sends as fast as the slowest of them reads; after a warm-up, one phase measures them alone, then a second phase
/// begins as the stalled subscribers connect all at once. Stalled subscribers are drained at the end to learn which
/// ones the server cut off; /varz and /connz say why.
/// </summary>
internal static class StormRunner
{
    private static readonly TimeSpan SampleEvery = TimeSpan.FromMilliseconds(250);
    private static readonly TimeSpan Quiet = TimeSpan.FromSeconds(3);

    /// <summary>Runs the storm on the chosen servers, prints the table and (unless told not to) updates docs/reliability.md.</summary>
    public static List<StormResult> Run(StormOptions options, TextWriter log, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(options);
        ArgumentNullException.ThrowIfNull(log);
        var starts = new List<(string Name, Func<MqttServer> Start)>();
        if (options.Server != SoakTarget.Ours)
        {
            var natsServer = NatsServerBinary.Locate(null, log);
            starts.Add(("nats-server", () => MqttServer.StartOnConfig("nats-server", null, natsServer, ports => Config(ports, options))));
        }

        if (options.Server != SoakTarget.NatsServer)
        {
            var hostDll = OurBroker.LocateHost(options.HostDll, log);
            starts.Add(("ours", () => MqttServer.StartOnConfig("ours", hostDll, null, ports => Config(ports, options))));
        }

        // Run by run, the servers alternate, each time a fresh process: drift of a shared machine falls on both.
        var results = new List<StormResult>();
        for (var run = 1; run <= options.Runs && !cancellationToken.IsCancellationRequested; run++)
        {
            foreach (var (name, start) in starts)
            {
                var result = new StormResult(name);
                results.Add(result);
                try
                {
                    using var server = start();
                    RunOne(server, options, result, log, cancellationToken);
                }
                catch (Exception ex) when (ex is InvalidOperationException or IOException or System.Net.Sockets.SocketException or TimeoutException or AggregateException or HttpRequestException or TaskCanceledException)
                {
                    result.Error ??= ex.Message;
                    log.WriteLine($"storm {name}: FAILED: {ex.Message}");
                }
            }
        }

        var markdown = StormReport.Render(options, results);
        log.WriteLine();
        log.Write(markdown);
        if (options.Write)
        {
            log.WriteLine($"wrote {ReliabilityDoc.WriteSection(Path.Combine(OurBroker.RepoRoot(), "docs", "reliability.md"), markdown)}");
        }

        return results;
    }

    /// <summary>The one configuration both servers run on (nats-server syntax; our host reads the same file).</summary>
    internal static string Config(MqttServer.ConfigPorts ports, StormOptions options)
        => string.Create(CultureInfo.InvariantCulture, $$"""
            listen: 127.0.0.1:{{ports.Nats}}
            http: 127.0.0.1:{{ports.Monitor}}
            server_name: storm
            max_pending: {{options.MaxPending}}
            max_payload: {{Math.Min(options.MaxPending, 1024 * 1024)}}
            jetstream { store_dir: "{{Path.Combine(ports.Directory, "js")}}" }
            mqtt { listen: "127.0.0.1:{{ports.Mqtt}}" }
            websocket { listen: "127.0.0.1:{{ports.WebSocket}}", no_tls: true }
            """);

    private static void RunOne(MqttServer server, StormOptions options, StormResult result, TextWriter log, CancellationToken cancellationToken)
    {
        using var http = new HttpClient { Timeout = TimeSpan.FromSeconds(10) };
        var monitor = new Uri($"http://{server.Monitor}");
        using var traffic = SteadyTraffic.Start(new NatsEndpoint(server.Nats!), server.Mqtt, options.FastPerProtocol, cancellationToken, server.WebSocket);
        result.FastSubscribers = traffic.Connections - 1;
        result.IdleRss = ProcessSample.Read(server.ProcessId, TimeSpan.Zero, 0).Rss;
        traffic.PublishAhead(options.Window, options.Payload);
        Thread.Sleep(options.WarmUp);
        Measure(server, traffic, options.Phase, result.FastSubscribers, result.Baseline, _ => { }, cancellationToken);
        log.WriteLine(Line($"storm {server.Name}: alone {result.Baseline.Rate:N0} msgs/s per fast subscriber (worst second {result.Baseline.WorstSecond:N0}), peak RSS {Mib(result.Baseline.PeakRss)} MiB"));

        var storm = Stopwatch.StartNew();
        var opening = Task.Run(() =>
        {
            var peers = StalledPeers.Open(server.Nats!, server.Mqtt, server.WebSocket!, options.Stalled, cancellationToken);
            result.OpenTime = storm.Elapsed;
            return peers;
        });
        Measure(server, traffic, options.Phase, result.FastSubscribers, result.Storm, _ =>
        {
            if (result.AllCutOffAfter is null && options.Stalled > 0 && SlowConsumers(http, monitor) >= options.Stalled)
            {
                result.AllCutOffAfter = storm.Elapsed;
            }
        }, cancellationToken);
        using var peers = opening.GetAwaiter().GetResult();
        log.WriteLine(Line($"storm {server.Name}: by second alone {string.Join(' ', result.Baseline.BySecond.Select(r => (r / 1000).ToString("N0", CultureInfo.InvariantCulture)))}k; with stalled {string.Join(' ', result.Storm.BySecond.Select(r => (r / 1000).ToString("N0", CultureInfo.InvariantCulture)))}k"));
        log.WriteLine(Line($"storm {server.Name}: with {options.Stalled} stalled {result.Storm.Rate:N0} msgs/s per fast subscriber (worst second {result.Storm.WorstSecond:N0}), peak RSS {Mib(result.Storm.PeakRss)} MiB, stalled open in {result.OpenTime.TotalSeconds:N2} s"));

        (result.Delivered, result.Lost, result.OutOfOrder) = traffic.Finish(TimeSpan.FromSeconds(15));
        result.Published = traffic.Published;
        result.Error = traffic.ReaderFailure;
        result.Stalled = peers.Classify(Quiet);
        result.SlowConsumers = SlowConsumers(http, monitor);
        foreach (var reason in CloseReasons(http, monitor))
        {
            result.CloseReasons[reason] = result.CloseReasons.GetValueOrDefault(reason) + 1;
        }

        log.WriteLine(Line($"storm {server.Name}: {result.Stalled.Count(s => s.CutOff)} of {result.Stalled.Count} stalled cut off, slow_consumers {result.SlowConsumers}, fast lost {result.Lost:N0} of {result.Published:N0}"));
    }

    /// <summary>Samples the fast subscribers' progress and the server's memory every 250 ms for <paramref name="length"/>.</summary>
    private static void Measure(MqttServer server, SteadyTraffic traffic, TimeSpan length, int subscribers, StormPhase phase, Action<TimeSpan> each, CancellationToken cancellationToken)
    {
        var samples = new List<(TimeSpan At, long Delivered)>();
        var clock = Stopwatch.StartNew();
        samples.Add((TimeSpan.Zero, traffic.Delivered));
        while (clock.Elapsed < length && !cancellationToken.IsCancellationRequested)
        {
            Thread.Sleep(SampleEvery);
            if (server.HasExited)
            {
                throw new InvalidOperationException($"{server.Name} exited during the storm: {server.OutputTail}");
            }

            samples.Add((clock.Elapsed, traffic.Delivered));
            phase.PeakRss = Math.Max(phase.PeakRss, ProcessSample.Read(server.ProcessId, clock.Elapsed, 0).Rss);
            each(clock.Elapsed);
        }

        double Rate(int from, int to) => (samples[to].Delivered - samples[from].Delivered) / (samples[to].At - samples[from].At).TotalSeconds / subscribers;
        phase.Rate = Rate(0, samples.Count - 1);
        var perSecond = (int)(TimeSpan.FromSeconds(1) / SampleEvery);
        phase.WorstSecond = Enumerable.Range(0, Math.Max(1, samples.Count - perSecond)).Select(i => Rate(i, Math.Min(i + perSecond, samples.Count - 1))).Min();
        for (var i = 0; i + perSecond < samples.Count; i += perSecond)
        {
            phase.BySecond.Add(Rate(i, i + perSecond));
        }
    }

    private static long SlowConsumers(HttpClient http, Uri monitor)
    {
        using var varz = JsonDocument.Parse(http.GetStringAsync(new Uri(monitor, "/varz")).GetAwaiter().GetResult());
        return varz.RootElement.TryGetProperty("slow_consumers", out var count) ? count.GetInt64() : 0;
    }

    private static List<string> CloseReasons(HttpClient http, Uri monitor)
    {
        using var connz = JsonDocument.Parse(http.GetStringAsync(new Uri(monitor, "/connz?state=closed&limit=10000")).GetAwaiter().GetResult());
        if (!connz.RootElement.TryGetProperty("connections", out var connections) || connections.ValueKind != JsonValueKind.Array)
        {
            return [];
        }

        return connections.EnumerateArray().Select(c => c.TryGetProperty("reason", out var reason) ? reason.GetString() ?? "?" : "?").ToList();
    }

    private static string Mib(long bytes) => (bytes / (1024.0 * 1024)).ToString("N1", CultureInfo.InvariantCulture);

    private static string Line(FormattableString text) => text.ToString(CultureInfo.InvariantCulture);
}
