using System.Diagnostics;
using System.Globalization;
using System.Net;
using System.Text.Json;
using Broker.Compare.Load;

namespace Broker.Compare.Servers;

/// <summary>The listeners of a server under test that the load generator can dial.</summary>
internal enum ListenerKind
{
    /// <summary>The NATS client port (clear text or TLS, as the configuration says).</summary>
    Nats,

    /// <summary>The WebSocket port (<c>websocket { port: {ws_port} }</c> in the configuration).</summary>
    WebSocket,

    /// <summary>The leaf node port (<c>leafnodes { listen: "127.0.0.1:{leaf_port}" }</c>); not probed at start.</summary>
    Leaf,

    /// <summary>The cluster port (<c>cluster { listen: "127.0.0.1:{route_port}" }</c>); not probed at start.</summary>
    Route,

    /// <summary>The monitoring port (<c>http: "127.0.0.1:{http_port}"</c>); not probed at start.</summary>
    Http,
}

/// <summary>
/// A server under test running as a child process on 127.0.0.1: started with its own configuration file when the
/// launch has one and every port random (its listeners read back from its ports file, <see cref="BoundPorts"/>), confirmed ready by a NATS handshake on every listener, measured through
/// <c>/proc/&lt;pid&gt;/status</c>, and killed (with its process tree) when disposed. Its output is drained and the
/// last lines kept for error messages.
/// </summary>
internal sealed class ServerProcess : IDisposable
{
    private static readonly TimeSpan StartTimeout = TimeSpan.FromSeconds(30);

    private readonly Process process;
    private readonly Queue<string> outputTail = new();
    private readonly string? configPath;
    private readonly string portsDirectory;

    private ServerProcess(ServerLaunch launch, Process process, string? configPath, string portsDirectory, long startedTimestamp)
    {
        StartedTimestamp = startedTimestamp;
        Launch = launch;
        this.process = process;
        this.configPath = configPath;
        this.portsDirectory = portsDirectory;
    }

    public ServerLaunch Launch { get; }

    /// <summary>The <see cref="Stopwatch"/> timestamp taken just before the process was started.</summary>
    public long StartedTimestamp { get; }

    /// <summary>The address of each listener this process has.</summary>
    public IReadOnlyDictionary<ListenerKind, IPEndPoint> Listeners { get; private set; } = new Dictionary<ListenerKind, IPEndPoint>();

    /// <summary>The NATS port.</summary>
    public IPEndPoint EndPoint => Listeners[ListenerKind.Nats];

    public int ProcessId => process.Id;

    /// <summary>The INFO the server sent the readiness probe.</summary>
    public JsonElement Info { get; private set; }

    /// <summary>Whether the process has ended (or was already disposed).</summary>
    public bool HasExited
    {
        get
        {
            try
            {
                return process.HasExited;
            }
            catch (InvalidOperationException)
            {
                return true;
            }
        }
    }

    /// <summary>The last lines the server printed, for error messages.</summary>
    public string OutputTail
    {
        get
        {
            lock (outputTail)
            {
                return string.Join(Environment.NewLine, outputTail);
            }
        }
    }

    /// <summary>
    /// Starts the server with every port random (writing its configuration file first), reads the ports it bound
    /// from its ports file (<see cref="BoundPorts"/>) and waits until every listener answers a NATS handshake (or fails).
    /// </summary>
    public static ServerProcess Start(ServerLaunch launch, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(launch);

        // The NATS port, then one per placeholder the configuration uses: each is bound by the server itself.
        var wanted = new[] { (ListenerKind.WebSocket, ServerLaunch.WebSocketPortPlaceholder), (ListenerKind.Leaf, ServerLaunch.LeafPortPlaceholder), (ListenerKind.Route, ServerLaunch.RoutePortPlaceholder), (ListenerKind.Http, ServerLaunch.HttpPortPlaceholder) }
            .Where(p => launch.Config?.Contains(p.Item2, StringComparison.Ordinal) == true)
            .Select(p => p.Item1)
            .Prepend(ListenerKind.Nats)
            .ToList();
        var portsDirectory = Directory.CreateTempSubdirectory($"broker-compare-{Environment.ProcessId}-ports-").FullName;
        string? configPath = null;
        var arguments = launch.Arguments.ToList();
        if (launch.Config is { } config)
        {
            foreach (var placeholder in new[] { ServerLaunch.WebSocketPortPlaceholder, ServerLaunch.LeafPortPlaceholder, ServerLaunch.RoutePortPlaceholder, ServerLaunch.HttpPortPlaceholder })
            {
                config = config.Replace(placeholder, BoundPorts.RandomPort, StringComparison.Ordinal);
            }

            configPath = Path.Combine(Path.GetTempPath(), $"broker-compare-{Environment.ProcessId}-{launch.Name}-{Guid.NewGuid():N}.conf");

            // A JetStream store directory of this process alone, removed with its configuration file.
            config = config.Replace(ServerLaunch.StoreDirPlaceholder, configPath + ".store", StringComparison.Ordinal);
            File.WriteAllText(configPath, config);
            arguments.AddRange(["-c", configPath]);
        }

        arguments.AddRange(["--ports_file_dir", portsDirectory]);
        var startInfo = new ProcessStartInfo(launch.FileName)
        {
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            RedirectStandardInput = true,
            UseShellExecute = false,
        };
        foreach (var argument in arguments)
        {
            startInfo.ArgumentList.Add(argument.Replace("{port}", BoundPorts.RandomPort, StringComparison.Ordinal));
        }

        Process process;
        var started = Stopwatch.GetTimestamp();
        try
        {
            process = Process.Start(startInfo) ?? throw new InvalidOperationException($"{launch.FileName} did not start.");
        }
        catch
        {
            DeleteFiles(configPath, portsDirectory);
            throw;
        }

        var server = new ServerProcess(launch, process, configPath, portsDirectory, started);
        ChildProcesses.Register(process);
        process.OutputDataReceived += (_, e) => server.Remember(e.Data);
        process.ErrorDataReceived += (_, e) => server.Remember(e.Data);
        process.BeginOutputReadLine();
        process.BeginErrorReadLine();
        try
        {
            var deadline = DateTime.UtcNow + StartTimeout;
            server.Listeners = server.WaitForPorts(wanted, deadline, cancellationToken);
            server.WaitUntilReady(deadline, cancellationToken);
            return server;
        }
        catch
        {
            server.Dispose();
            throw;
        }
    }

    /// <summary>
    /// How the load generator reaches this server over <paramref name="transport"/>: the NATS port (pinning the
    /// launch's certificate for TLS) or the WebSocket port.
    /// </summary>
    public NatsEndpoint EndPointFor(NatsTransport transport) => transport switch
    {
        NatsTransport.Tcp => new NatsEndpoint(EndPoint),
        NatsTransport.Tls => new NatsEndpoint(EndPoint, NatsTransport.Tls)
        {
            PinnedCertificate = Launch.TlsCertificate ?? throw new InvalidOperationException($"{Launch.Name} was started without TLS on its NATS port."),
        },
        NatsTransport.WebSocket => new NatsEndpoint(
            Listeners.TryGetValue(ListenerKind.WebSocket, out var address) ? address : throw new InvalidOperationException($"{Launch.Name} was started without a WebSocket port."),
            NatsTransport.WebSocket),
        _ => throw new ArgumentOutOfRangeException(nameof(transport)),
    };

    /// <summary>The server's resident set size in bytes (VmRSS).</summary>
    public long ReadRss()
    {
        foreach (var line in File.ReadLines($"/proc/{process.Id}/status"))
        {
            if (line.StartsWith("VmRSS:", StringComparison.Ordinal))
            {
                var kilobytes = long.Parse(line.AsSpan(6).Trim().TrimEnd("kB").Trim(), CultureInfo.InvariantCulture);
                return kilobytes * 1024;
            }
        }

        throw new InvalidOperationException($"/proc/{process.Id}/status has no VmRSS line.");
    }

    /// <summary>
    /// User + system CPU time the server process has used so far, all threads (<c>/proc/&lt;pid&gt;/stat</c>, in
    /// USER_HZ ticks, which Linux fixes at 100 per second for user space).
    /// </summary>
    public TimeSpan ReadCpuTime()
    {
        // A server that died has no /proc entry: say how it died (exit code, last output) instead.
        EnsureRunning();
        var stat = File.ReadAllText($"/proc/{process.Id}/stat");

        // Fields after the command name, which is in parentheses and may contain spaces: state is the first.
        var fields = stat[(stat.LastIndexOf(')') + 2)..].Split(' ');
        var ticks = long.Parse(fields[11], CultureInfo.InvariantCulture) + long.Parse(fields[12], CultureInfo.InvariantCulture);
        return TimeSpan.FromMilliseconds(ticks * 10);
    }

    /// <summary>Throws when the server died (for example during a run), with its last output.</summary>
    public void EnsureRunning()
    {
        if (process.HasExited)
        {
            throw new InvalidOperationException($"{Launch.Name} exited with code {process.ExitCode}{Tail()}");
        }
    }

    /// <summary>
    /// Stops the server as an operator does: SIGTERM, then waits for it to exit (both servers shut down cleanly on it,
    /// writing their stores' state). One still running after <paramref name="timeout"/> is noted in its output tail and
    /// left to <see cref="Dispose"/>, which kills it.
    /// </summary>
    public void Stop(TimeSpan timeout)
    {
        if (HasExited)
        {
            return;
        }

        using (var kill = Process.Start(new ProcessStartInfo("kill", ["-TERM", process.Id.ToString(CultureInfo.InvariantCulture)]) { UseShellExecute = false }))
        {
            kill?.WaitForExit();
        }

        if (!process.WaitForExit(timeout))
        {
            Remember($"not stopped by SIGTERM within {timeout.TotalSeconds:0} s");
        }
    }

    public void Dispose()
    {
        try
        {
            if (!process.HasExited)
            {
                process.Kill(entireProcessTree: true);
                process.WaitForExit(10_000);
            }
        }
        catch (InvalidOperationException)
        {
            // Already gone.
        }

        ChildProcesses.Unregister(process);
        process.Dispose();
        DeleteFiles(configPath, portsDirectory);
    }

    /// <summary>Waits for the ports file naming every listener in <paramref name="wanted"/>.</summary>
    private Dictionary<ListenerKind, IPEndPoint> WaitForPorts(IReadOnlyCollection<ListenerKind> wanted, DateTime deadline, CancellationToken cancellationToken)
    {
        using var http = new HttpClient { Timeout = TimeSpan.FromSeconds(5) };
        while (true)
        {
            cancellationToken.ThrowIfCancellationRequested();
            if (process.HasExited)
            {
                throw new ServerStartException($"{Launch.Name} exited with code {process.ExitCode} before listening{Tail()}");
            }

            try
            {
                if (BoundPorts.TryRead(portsDirectory, process.Id, wanted, http, cancellationToken) is { } listeners)
                {
                    return listeners;
                }
            }
            catch (InvalidOperationException ex)
            {
                throw new ServerStartException($"{Launch.Name}: {ex.Message}{Tail()}");
            }

            if (DateTime.UtcNow > deadline)
            {
                throw new ServerStartException($"{Launch.Name} wrote no ports file in {portsDirectory} within {StartTimeout.TotalSeconds:0} s{Tail()}");
            }

            BoundPorts.Pause(cancellationToken);
        }
    }

    private void WaitUntilReady(DateTime deadline, CancellationToken cancellationToken)
    {
        while (true)
        {
            cancellationToken.ThrowIfCancellationRequested();
            if (process.HasExited)
            {
                throw new ServerStartException($"{Launch.Name} exited with code {process.ExitCode} before listening{Tail()}");
            }

            var endPoint = EndPointFor(Launch.TlsCertificate is null ? NatsTransport.Tcp : NatsTransport.Tls);
            try
            {
                using (var probe = NatsSocket.Open(endPoint, "probe"))
                {
                    using var document = JsonDocument.Parse(probe.Info);
                    Info = document.RootElement.Clone();
                }

                // Other listeners may open after the NATS port: the first run must not race them.
                if (Listeners.ContainsKey(ListenerKind.WebSocket))
                {
                    endPoint = EndPointFor(NatsTransport.WebSocket);
                    using var webSocketProbe = NatsSocket.Open(endPoint, "probe");
                }

                return;
            }
            catch (Exception ex) when (ex is System.Net.Sockets.SocketException or AggregateException or IOException or TimeoutException)
            {
                if (DateTime.UtcNow > deadline)
                {
                    throw new ServerStartException($"{Launch.Name} did not accept NATS connections on {endPoint} within {StartTimeout.TotalSeconds:0} s{Tail()}");
                }

                // Short: the restart row measures the time until a server answers, to the millisecond.
                Thread.Sleep(10);
            }
            catch (Exception ex) when (ex is InvalidOperationException or System.Security.Authentication.AuthenticationException)
            {
                // The server answers, but not as the launch expects (TLS where none was expected, or the other way
                // round): retrying cannot help.
                throw new ServerStartException($"{Launch.Name} on {endPoint}: {ex.Message}{Tail()}");
            }
        }
    }

    private string Tail() => OutputTail is { Length: > 0 } tail ? ": " + tail : " (no output)";

    private void Remember(string? line)
    {
        if (line is null)
        {
            return;
        }

        lock (outputTail)
        {
            outputTail.Enqueue(line);
            while (outputTail.Count > 20)
            {
                outputTail.Dequeue();
            }
        }
    }

    private static void DeleteFiles(string? path, string portsDirectory)
    {
        if (Directory.Exists(portsDirectory))
        {
            Directory.Delete(portsDirectory, recursive: true);
        }

        if (path is not null)
        {
            File.Delete(path);
            if (Directory.Exists(path + ".store"))
            {
                Directory.Delete(path + ".store", recursive: true);
            }
        }
    }
}

/// <summary>A server could not be started (it exited or never listened).</summary>
internal sealed class ServerStartException(string message) : Exception(message);
