using System.Diagnostics;
using System.Globalization;

namespace Broker.MonitoringCompare;

/// <summary>
/// Runs the three measurements and prints one Markdown table each: cold start-up (every server kind started
/// <see cref="CompareOptions.Startups"/> times, kinds interleaved, medians), load (both servers up at once, each path
/// measured on one then the other, so a change of machine load hits both), and what must ship.
/// </summary>
internal sealed class CompareRunner(CompareOptions options, TextWriter output)
{
    private static readonly string[] Kinds = ["none", "own", "kestrel"];
    private static readonly string[] Paths = ["/varz", "/healthz"];

    public async Task RunAsync()
    {
        output.WriteLine($"Monitoring HTTP server: own vs Kestrel. {Environment.ProcessorCount} cores, .NET {Environment.Version}, " +
            $"{options.Startups} cold starts each, load {options.Rounds} x {options.Seconds} s per server and path with {options.Connections} keep-alive connections.");
        output.WriteLine();
        Startup();
        await LoadAsync().ConfigureAwait(false);
    }

    private void Startup()
    {
        var runs = Kinds.ToDictionary(k => k, _ => new List<ChildServer>());
        for (var round = 0; round < options.Startups; round++)
        {
            // The order rotates from round to round, so no kind always starts right after another's exit.
            foreach (var kind in Kinds.Skip(round % Kinds.Length).Concat(Kinds.Take(round % Kinds.Length)))
            {
                var child = ChildServer.Start(kind);
                child.Dispose();
                runs[kind].Add(child);
            }
        }

        output.WriteLine("Start-up (median of cold starts; ms from Main; the working set and managed heap right after the first 200):");
        output.WriteLine();
        output.WriteLine("| Server | Runtime to Main | Main to listening | Main to first 200 /varz | Process start to ready (wall) | Working set | Managed heap |");
        output.WriteLine("|---|---:|---:|---:|---:|---:|---:|");
        foreach (var kind in Kinds)
        {
            var list = runs[kind];
            output.WriteLine(string.Create(
                CultureInfo.InvariantCulture,
                $"| {Name(kind)} | {Median(list, c => c.ProcessToMainMs):0} | {Median(list, c => c.ListeningMs):0} | {(kind == "none" ? "-" : Median(list, c => c.FirstOkMs).ToString("0", CultureInfo.InvariantCulture))} | {Median(list, c => c.WallMs):0} | {Median(list, c => c.WorkingSetAtStart) / 1048576:0.0} MiB | {Median(list, c => c.ManagedHeapAtStart) / 1048576:0.0} MiB |"));
        }

        output.WriteLine();
    }

    private async Task LoadAsync()
    {
        using var own = ChildServer.Start("own");
        using var kestrel = ChildServer.Start("kestrel");
        ChildServer[] servers = [own, kestrel];
        var results = new Dictionary<(string Kind, string Path), List<(long Requests, TimeSpan Elapsed, long Allocated, long Body)>>();
        for (var round = 0; round < options.Rounds; round++)
        {
            foreach (var path in Paths)
            {
                // Each round alternates which server goes first, so a drift of the machine's load hits both alike.
                foreach (var server in round % 2 == 0 ? servers : Enumerable.Reverse(servers))
                {
                    using var load = new LoadGenerator(server.Port, options.Connections);
                    await load.RunAsync(path, TimeSpan.FromSeconds(1)).ConfigureAwait(false);
                    var before = server.CommandNumber("ALLOC");
                    var (requests, elapsed) = await load.RunAsync(path, TimeSpan.FromSeconds(options.Seconds)).ConfigureAwait(false);
                    var after = server.CommandNumber("ALLOC");
                    var key = (server.Kind, path);
                    if (!results.TryGetValue(key, out var list))
                    {
                        results[key] = list = [];
                    }

                    list.Add((requests, elapsed, after - before, load.ResponseBytes));
                }
            }
        }

        output.WriteLine($"Load ({options.Connections} keep-alive HttpClient connections, {options.Rounds} rounds of {options.Seconds} s per server and path after 1 s of warm-up, " +
            "servers alternating; requests/s: median and range of the rounds; allocated: the server process's GC.GetTotalAllocatedBytes delta / requests, all rounds):");
        output.WriteLine();
        output.WriteLine("| Server | Request | Requests/s (median) | Requests/s (min-max) | Allocated per request | Response body |");
        output.WriteLine("|---|---|---:|---:|---:|---:|");
        foreach (var path in Paths)
        {
            foreach (var server in servers)
            {
                var list = results[(server.Kind, path)];
                var rates = list.Select(r => r.Requests / r.Elapsed.TotalSeconds).Order().ToList();
                var median = rates.Count % 2 == 1 ? rates[rates.Count / 2] : (rates[(rates.Count / 2) - 1] + rates[rates.Count / 2]) / 2;
                output.WriteLine(string.Create(
                    CultureInfo.InvariantCulture,
                    $"| {Name(server.Kind)} | GET {path} | {median:0} | {rates[0]:0}-{rates[^1]:0} | {(double)list.Sum(r => r.Allocated) / list.Sum(r => r.Requests):0} B | {list[^1].Body} B |"));
            }
        }

        output.WriteLine();
        var (loadedCount, loadedBytes) = Pair(kestrel.Command("LOADED"));
        var (files, bytes) = Sizes.AspNetCoreFramework();
        output.WriteLine("Footprint:");
        output.WriteLine();
        output.WriteLine("| | Own | Kestrel |");
        output.WriteLine("|---|---:|---:|");
        output.WriteLine(string.Create(CultureInfo.InvariantCulture, $"| Working set after the load | {own.CommandNumber("WS") / 1048576.0:0.0} MiB | {kestrel.CommandNumber("WS") / 1048576.0:0.0} MiB |"));
        output.WriteLine(string.Create(CultureInfo.InvariantCulture, $"| Broker.Core.dll (holds the own server, 714 lines of it) | {Sizes.BrokerCoreBytes / 1024.0:0} KiB | {Sizes.BrokerCoreBytes / 1024.0:0} KiB |"));
        output.WriteLine(string.Create(CultureInfo.InvariantCulture, $"| ASP.NET Core shared framework assemblies loaded | - | {loadedCount} files, {loadedBytes / 1048576.0:0.0} MiB |"));
        output.WriteLine(string.Create(CultureInfo.InvariantCulture, $"| ASP.NET Core shared framework to install or ship ({Path.GetFileName(Sizes.AspNetCoreFrameworkDirectory)}) | - | {files} files, {bytes / 1048576.0:0.0} MiB |"));
    }

    private static (long, long) Pair(string line)
    {
        var parts = line.Split(' ');
        return (long.Parse(parts[0], CultureInfo.InvariantCulture), long.Parse(parts[1], CultureInfo.InvariantCulture));
    }

    private static string Name(string kind) => kind switch
    {
        "own" => "Own HTTP server",
        "kestrel" => "Kestrel + MonitorRouter",
        _ => "Broker, no monitoring",
    };

    private static double Median(List<ChildServer> runs, Func<ChildServer, double> value)
    {
        var sorted = runs.Select(value).Order().ToList();
        return sorted.Count % 2 == 1 ? sorted[sorted.Count / 2] : (sorted[(sorted.Count / 2) - 1] + sorted[sorted.Count / 2]) / 2;
    }
}

/// <summary><c>N</c> keep-alive connections, each a loop of GETs, for a fixed duration; counts 200s.</summary>
internal sealed class LoadGenerator : IDisposable
{
    private readonly HttpClient client;
    private readonly int connections;

    public LoadGenerator(int port, int connections)
    {
        this.connections = connections;
        client = new HttpClient(new SocketsHttpHandler
        {
            MaxConnectionsPerServer = connections,
            PooledConnectionLifetime = Timeout.InfiniteTimeSpan,
            UseProxy = false,
        })
        {
            BaseAddress = new Uri($"http://127.0.0.1:{port}"),
        };
    }

    public long ResponseBytes { get; private set; }

    public async Task<(long Requests, TimeSpan Elapsed)> RunAsync(string path, TimeSpan duration)
    {
        long requests = 0;
        var clock = Stopwatch.StartNew();
        var loops = Enumerable.Range(0, connections).Select(async _ =>
        {
            while (clock.Elapsed < duration)
            {
                var body = await client.GetByteArrayAsync(path).ConfigureAwait(false);
                ResponseBytes = body.Length;
                Interlocked.Increment(ref requests);
            }
        });
        await Task.WhenAll(loops).ConfigureAwait(false);
        return (requests, clock.Elapsed);
    }

    public void Dispose() => client.Dispose();
}
