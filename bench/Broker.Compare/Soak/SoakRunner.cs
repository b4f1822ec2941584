using System.Diagnostics;
using System.Globalization;
using Broker.Compare.Report;
using Broker.Compare.Load;
using Broker.Compare.Mqtt;
using Broker.Compare.Servers;

namespace Broker.Compare.Soak;

/// <summary>
/// The soak (issue 14): per server, a fresh process (our host with MQTT, or nats-server with JetStream and MQTT,
/// launched as the MQTT comparison launches them); a baseline of the idle server; steady publisher and subscribers;
/// every churned client opened; then churn and traffic for the run's duration, sampled from /proc; then the traffic
/// is checked for losses, every client closed, and the server watched until its descriptors and threads are back.
/// </summary>
internal static class SoakRunner
{
    private const int FillThreads = 8;
    private const int ChurnThreads = 16;
    private static readonly TimeSpan KeepAliveInterval = TimeSpan.FromSeconds(20);
    private static readonly TimeSpan SettleTimeout = TimeSpan.FromSeconds(45);

    /// <summary>Runs the soak on the chosen servers, prints the table and (unless told not to) updates docs/reliability.md.</summary>
    public static List<SoakResult> Run(SoakOptions options, TextWriter log, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(options);
        ArgumentNullException.ThrowIfNull(log);

        // Every churned client is one descriptor here and one in the server (which inherits the limit); a churn thread
        // closes a client before it opens its replacement, so at most one extra each.
        FileDescriptorLimit.Ensure((ulong)(options.Nats + options.Mqtt + (2 * options.SteadySubscribers) + ChurnThreads) + FileDescriptorLimit.Headroom);
        var starts = new List<(string Name, Func<MqttServer> Start)>();
        if (options.Server != SoakTarget.Ours)
        {
            var natsServer = NatsServerBinary.Locate(null, log);
            starts.Add(("nats-server", () => options.Accounts
                ? MqttServer.StartOnConfig("nats-server", null, natsServer, SoakAccounts.Config)
                : MqttServer.StartNatsServer(natsServer)));
        }

        if (options.Server != SoakTarget.NatsServer)
        {
            var hostDll = OurBroker.LocateHost(null, log);
            starts.Add(("ours", () => options.Accounts
                ? MqttServer.StartOnConfig("ours", hostDll, null, SoakAccounts.Config)
                : MqttServer.StartOurs(hostDll)));
        }

        var results = new List<SoakResult>();
        foreach (var (name, start) in starts)
        {
            var result = new SoakResult(name);
            results.Add(result);
            try
            {
                using var server = start();
                RunOne(server, options, result, log, cancellationToken);
            }
            catch (Exception ex) when (ex is InvalidOperationException or IOException or System.Net.Sockets.SocketException or TimeoutException)
            {
                result.Error ??= ex.Message;
                log.WriteLine($"soak {name}: FAILED: {ex.Message}");
            }
        }

        var markdown = SoakReport.Render(options, results);
        log.WriteLine();
        log.Write(markdown);
        if (options.Write)
        {
            log.WriteLine($"wrote {ReliabilityDoc.WriteSection(Path.Combine(OurBroker.RepoRoot(), "docs", "reliability.md"), markdown)}");
        }

        return results;
    }

    private static void RunOne(MqttServer server, SoakOptions options, SoakResult result, TextWriter log, CancellationToken cancellationToken)
    {
        var clock = Stopwatch.StartNew();
        var nats = new NatsEndpoint(server.Nats!);

        // The baseline: the idle server after one client of each protocol came and went (nats-server creates its
        // MQTT streams on the first MQTT connection; those files are not the soak's).
        NatsSocket.Open(nats, "soak-probe").Abort();
        using (var probe = MqttWire.ConnectAsync(server.Mqtt, "soak-probe", cancellationToken).GetAwaiter().GetResult())
        {
            probe.Socket.Send(MqttWire.Disconnect);
        }

        Thread.Sleep(TimeSpan.FromSeconds(2));
        result.Baseline = ProcessSample.Read(server.ProcessId, clock.Elapsed, 0);
        var baselineDescriptors = ProcessSample.Descriptors(server.ProcessId);
        log.WriteLine($"soak {server.Name}: baseline {Describe(result.Baseline)}");

        var pool = new ChurnPool(nats, server.Mqtt, options.Nats, options.Mqtt, options.Accounts);
        using var traffic = SteadyTraffic.Start(nats, server.Mqtt, options.SteadySubscribers, cancellationToken, importing: options.Accounts);
        traffic.Publish(options.Rate);
        var filling = Stopwatch.StartNew();
        pool.Fill(FillThreads, cancellationToken);
        result.FillTime = filling.Elapsed;
        log.WriteLine(string.Create(CultureInfo.InvariantCulture, $"soak {server.Name}: {pool.Open:N0} churned clients open in {result.FillTime.TotalSeconds:N1} s ({pool.Failures:N0} failed)"));

        using var stop = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        long replacements = 0;
        var churn = new Thread(() => replacements = pool.Churn(options.Churn, ChurnThreads, stop.Token)) { IsBackground = true, Name = "soak-churn" };
        var churning = Stopwatch.StartNew();
        churn.Start();
        var lastKeepAlive = TimeSpan.Zero;
        try
        {
            while (churning.Elapsed < options.Duration && !cancellationToken.IsCancellationRequested)
            {
                Thread.Sleep(options.SampleInterval);
                if (server.HasExited)
                {
                    throw new InvalidOperationException($"{server.Name} exited during the soak: {server.OutputTail}");
                }

                var sample = ProcessSample.Read(server.ProcessId, clock.Elapsed, pool.Open + traffic.Connections);
                result.Samples.Add(sample);
                result.End = sample;
                if (result.AfterWarmUp is null && churning.Elapsed >= options.WarmUp)
                {
                    result.AfterWarmUp = sample;
                }

                if (churning.Elapsed - lastKeepAlive >= KeepAliveInterval)
                {
                    lastKeepAlive = churning.Elapsed;
                    pool.KeepAlive();
                    traffic.KeepAlive();
                }

                log.WriteLine(string.Create(CultureInfo.InvariantCulture,
                    $"soak {server.Name} {churning.Elapsed.TotalSeconds,6:N0} s: {Describe(sample)}, {pool.Connects:N0} connects ({pool.Failures:N0} failed), {traffic.Published:N0} published"));
            }
        }
        finally
        {
            stop.Cancel();
            churn.Join();
        }

        result.ChurnTime = churning.Elapsed;
        result.Replacements = replacements;
        (result.Delivered, result.Lost, result.OutOfOrder) = traffic.Finish(TimeSpan.FromSeconds(15));
        result.Published = traffic.Published;
        result.Connects = pool.Connects;
        result.ConnectFailures = pool.Failures;
        result.FirstConnectFailure = pool.FirstFailure;
        result.Error = traffic.ReaderFailure;

        pool.CloseAll();
        traffic.Dispose();
        var settling = Stopwatch.StartNew();
        int AssemblyFiles() => ProcessSample.NewAssemblyFiles(baselineDescriptors, ProcessSample.Descriptors(server.ProcessId));
        do
        {
            Thread.Sleep(TimeSpan.FromSeconds(1));
            result.Closed = ProcessSample.Read(server.ProcessId, clock.Elapsed, 0);
        }
        while (settling.Elapsed < SettleTimeout
            && (result.Closed.FileDescriptors - AssemblyFiles() > result.Baseline.FileDescriptors || result.Closed.Threads > result.Baseline.Threads));

        var descriptors = ProcessSample.Descriptors(server.ProcessId);
        result.AssemblyDescriptors = ProcessSample.NewAssemblyFiles(baselineDescriptors, descriptors);
        result.LeftoverDescriptors = ProcessSample.Leftover(server.ProcessId, baselineDescriptors, descriptors);
        log.WriteLine($"soak {server.Name}: closed {Describe(result.Closed)} after {settling.Elapsed.TotalSeconds:N0} s (new descriptors: {(result.LeftoverDescriptors.Length == 0 ? "none" : result.LeftoverDescriptors)}); lost {result.Lost:N0} of {result.Published:N0}");
    }

    private static string Describe(ProcessSample sample)
        => string.Create(CultureInfo.InvariantCulture, $"RSS {sample.Rss / (1024.0 * 1024):N1} MiB, {sample.FileDescriptors:N0} fds, {sample.Threads} threads, {sample.Connections:N0} clients");
}
