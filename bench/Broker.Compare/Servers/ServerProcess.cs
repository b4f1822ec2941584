using System.Diagnostics;
using System.Globalization;
using System.Net;
using System.Text.Json;
using Broker.Compare.Load;

namespace Broker.Compare.Servers;

/// <summary>How to start one server: the program and arguments, with <c>{port}</c> standing for the port.</summary>
internal sealed record ServerLaunch(string Name, string FileName, IReadOnlyList<string> Arguments, string Description);

/// <summary>
/// A server under test running as a child process on 127.0.0.1: started, confirmed ready by reading its INFO,
/// measured through <c>/proc/&lt;pid&gt;/status</c>, and killed (with its process tree) when disposed. Its output is
/// drained and the last lines kept for error messages.
/// </summary>
internal sealed class ServerProcess : IDisposable
{
    private static readonly TimeSpan StartTimeout = TimeSpan.FromSeconds(30);

    private readonly Process process;
    private readonly Queue<string> outputTail = new();

    private ServerProcess(ServerLaunch launch, Process process, int port)
    {
        Launch = launch;
        this.process = process;
        EndPoint = new IPEndPoint(IPAddress.Loopback, port);
    }

    public ServerLaunch Launch { get; }

    public IPEndPoint EndPoint { get; }

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

    /// <summary>Starts the server on a free loopback port and waits until it sends INFO (or fails).</summary>
    public static ServerProcess Start(ServerLaunch launch, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(launch);
        var port = FreePort();
        var startInfo = new ProcessStartInfo(launch.FileName)
        {
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            RedirectStandardInput = true,
            UseShellExecute = false,
        };
        foreach (var argument in launch.Arguments)
        {
            startInfo.ArgumentList.Add(argument.Replace("{port}", port.ToString(CultureInfo.InvariantCulture), StringComparison.Ordinal));
        }

        var process = Process.Start(startInfo) ?? throw new InvalidOperationException($"{launch.FileName} did not start.");
        var server = new ServerProcess(launch, process, port);
        ChildProcesses.Register(process);
        process.OutputDataReceived += (_, e) => server.Remember(e.Data);
        process.ErrorDataReceived += (_, e) => server.Remember(e.Data);
        process.BeginOutputReadLine();
        process.BeginErrorReadLine();
        try
        {
            server.WaitUntilReady(cancellationToken);
            return server;
        }
        catch
        {
            server.Dispose();
            throw;
        }
    }

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
    }

    private void WaitUntilReady(CancellationToken cancellationToken)
    {
        var deadline = DateTime.UtcNow + StartTimeout;
        while (true)
        {
            cancellationToken.ThrowIfCancellationRequested();
            if (process.HasExited)
            {
                throw new ServerStartException($"{Launch.Name} exited with code {process.ExitCode} before listening{Tail()}");
            }

            try
            {
                using var probe = NatsSocket.Open(new NatsEndpoint(EndPoint), "probe");
                using var document = JsonDocument.Parse(probe.Info);
                Info = document.RootElement.Clone();
                return;
            }
            catch (Exception ex) when (ex is System.Net.Sockets.SocketException or AggregateException or IOException or TimeoutException)
            {
                if (DateTime.UtcNow > deadline)
                {
                    throw new ServerStartException($"{Launch.Name} did not accept NATS connections on {EndPoint} within {StartTimeout.TotalSeconds:0} s{Tail()}");
                }

                Thread.Sleep(100);
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

    private static int FreePort()
    {
        using var socket = new System.Net.Sockets.Socket(System.Net.Sockets.AddressFamily.InterNetwork, System.Net.Sockets.SocketType.Stream, System.Net.Sockets.ProtocolType.Tcp);
        socket.Bind(new IPEndPoint(IPAddress.Loopback, 0));
        return ((IPEndPoint)socket.LocalEndPoint!).Port;
    }
}

/// <summary>A server could not be started (it exited or never listened).</summary>
internal sealed class ServerStartException(string message) : Exception(message);
