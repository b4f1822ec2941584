using System.Collections.Concurrent;
using System.Diagnostics;
using System.Globalization;
using System.Net;
using System.Text.RegularExpressions;

namespace Broker.Host.Tests.Process;

/// <summary>
/// The real host executable (<c>dotnet Broker.Host.dll</c>) as a child process, with its standard output and error
/// collected line by line. Disposing it kills the process if it still runs.
/// </summary>
/// <remarks>
/// It runs the copy of the host this test project's build placed in its output folder, so the default plugins
/// folder next to it is this project's plugins/ folder, which holds the sample plugin.
/// </remarks>
internal sealed partial class HostProcess : IAsyncDisposable
{
    public static readonly TimeSpan StartTimeout = TimeSpan.FromSeconds(30);

    private readonly System.Diagnostics.Process process;
    private readonly ConcurrentQueue<string> lines = new();
    private readonly SemaphoreSlim lineAdded = new(0);

    private HostProcess(System.Diagnostics.Process process)
    {
        this.process = process;
    }

    /// <summary>
    /// The test output's own copy of the host (framework-dependent IL), or the one BROKER_TEST_HOST_DLL names: the
    /// process tests can then run against a build output such as the self-contained composite host, with the sample
    /// plugins copied into its plugins/ folder.
    /// </summary>
    public static string HostAssembly { get; } = Environment.GetEnvironmentVariable("BROKER_TEST_HOST_DLL") is { Length: > 0 } dll
        ? Path.GetFullPath(dll)
        : Path.Combine(AppContext.BaseDirectory, "Broker.Host.dll");

    public int Id => process.Id;

    public IReadOnlyCollection<string> Lines => lines;

    public string Output => string.Join(Environment.NewLine, lines);

    /// <summary>Starts the host with these arguments; BROKER_ variables of the test's own environment are not passed on.</summary>
    public static HostProcess Start(IEnumerable<string> args, IDictionary<string, string>? environment = null) =>
        Start(Environment.GetEnvironmentVariable("DOTNET_HOST_PATH") ?? "dotnet", [HostAssembly, .. args], environment);

    /// <summary>Starts a launcher of the host (such as scripts/nats-server) with these arguments.</summary>
    public static HostProcess Start(string fileName, IEnumerable<string> args, IDictionary<string, string>? environment = null)
    {
        var startInfo = new ProcessStartInfo(fileName)
        {
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
        };
        foreach (var arg in args)
        {
            startInfo.ArgumentList.Add(arg);
        }

        foreach (var key in startInfo.Environment.Keys.Where(k => k.StartsWith("BROKER_", StringComparison.OrdinalIgnoreCase)).ToList())
        {
            startInfo.Environment.Remove(key);
        }

        foreach (var (key, value) in environment ?? new Dictionary<string, string>())
        {
            startInfo.Environment[key] = value;
        }

        var process = new System.Diagnostics.Process { StartInfo = startInfo };
        var host = new HostProcess(process);
        process.OutputDataReceived += (_, e) => host.Add(e.Data);
        process.ErrorDataReceived += (_, e) => host.Add(e.Data);
        process.Start();
        process.BeginOutputReadLine();
        process.BeginErrorReadLine();
        return host;
    }

    /// <summary>Starts the host on 127.0.0.1 with a random client port and waits until it is ready.</summary>
    public static async Task<HostProcess> StartReadyAsync(IEnumerable<string>? args = null, IDictionary<string, string>? environment = null)
    {
        var host = Start(["-a", "127.0.0.1", "-p", "-1", .. args ?? []], environment);
        try
        {
            await host.WaitForLineAsync("Broker is ready", StartTimeout);
            return host;
        }
        catch
        {
            await host.DisposeAsync();
            throw;
        }
    }

    /// <summary>The bound endpoint of a listener, from its "Listening for ... on HOST:PORT (name)" log line.</summary>
    public IPEndPoint EndPoint(string listener)
    {
        foreach (var line in lines)
        {
            var match = ListeningLine().Match(line);
            if (match.Success && match.Groups["name"].Value == listener)
            {
                return new IPEndPoint(IPAddress.Parse(match.Groups["host"].Value), int.Parse(match.Groups["port"].Value, CultureInfo.InvariantCulture));
            }
        }

        throw new InvalidOperationException($"No listener '{listener}' was logged. Output:{Environment.NewLine}{Output}");
    }

    public bool HasListener(string listener) => lines.Any(l => ListeningLine().Match(l) is { Success: true } m && m.Groups["name"].Value == listener);

    public bool HasExited => process.HasExited;

    /// <summary>
    /// Waits for a line containing <paramref name="text"/> among the lines from index <paramref name="from"/> on (to
    /// wait for a second occurrence, pass the line count seen before); fails with the whole output on timeout or exit.
    /// </summary>
    public async Task<string> WaitForLineAsync(string text, TimeSpan timeout, int from = 0)
    {
        var deadline = DateTime.UtcNow + timeout;
        var exited = false;
        while (true)
        {
            var line = lines.Skip(from).FirstOrDefault(l => l.Contains(text, StringComparison.Ordinal));
            if (line is not null)
            {
                return line;
            }

            if (exited || DateTime.UtcNow >= deadline)
            {
                throw new TimeoutException($"The host did not log \"{text}\" (exited: {exited}). Output:{Environment.NewLine}{Output}");
            }

            if (process.HasExited)
            {
                // Drain what the process wrote before exiting, then look one last time.
                process.WaitForExit();
                exited = true;
                continue;
            }

            await lineAdded.WaitAsync(TimeSpan.FromMilliseconds(200));
        }
    }

    /// <summary>Sends a POSIX signal (TERM, INT) with kill(1).</summary>
    public async Task SignalAsync(string signal)
    {
        using var kill = System.Diagnostics.Process.Start("kill", ["-s", signal, process.Id.ToString(CultureInfo.InvariantCulture)]);
        using var cts = new CancellationTokenSource(TimeSpan.FromSeconds(10));
        await kill.WaitForExitAsync(cts.Token);
        Assert.Equal(0, kill.ExitCode);
    }

    /// <summary>Waits for the process to exit and returns its exit code; fails on timeout.</summary>
    public async Task<int> WaitForExitAsync(TimeSpan timeout)
    {
        using var cts = new CancellationTokenSource(timeout);
        try
        {
            await process.WaitForExitAsync(cts.Token);
        }
        catch (OperationCanceledException)
        {
            throw new TimeoutException($"The host did not exit within {timeout}. Output:{Environment.NewLine}{Output}");
        }

        // The parameterless overload also waits for the output streams to be drained.
        process.WaitForExit();
        return process.ExitCode;
    }

    public async ValueTask DisposeAsync()
    {
        try
        {
            if (!process.HasExited)
            {
                process.Kill(entireProcessTree: true);
                using var cts = new CancellationTokenSource(TimeSpan.FromSeconds(10));
                await process.WaitForExitAsync(cts.Token);
            }
        }
        catch (InvalidOperationException)
        {
        }
        catch (OperationCanceledException)
        {
        }

        process.Dispose();
        lineAdded.Dispose();
    }

    private void Add(string? line)
    {
        if (line is null)
        {
            return;
        }

        lines.Enqueue(line);
        try
        {
            lineAdded.Release();
        }
        catch (ObjectDisposedException)
        {
            // Output that arrives while the test is disposing the process.
        }
    }

    [GeneratedRegex(@"Listening for \S+ connections on (?<host>[0-9.]+):(?<port>\d+) \((?<name>[^)]+)\)")]
    private static partial Regex ListeningLine();
}
