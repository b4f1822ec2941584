using System.Net;
using System.Net.Sockets;

namespace Broker.TestKit;

/// <summary>
/// The Go reference server (Debian's <c>nats-server</c>) started on a free loopback port, so tests can check that
/// our broker answers exactly as it does. The test command installs it; a missing binary fails the test.
/// </summary>
public sealed class ReferenceServer : IAsyncDisposable
{
    private readonly ExternalProcess process;
    private readonly string? configPath;

    private ReferenceServer(ExternalProcess process, int port, string? configPath)
    {
        this.process = process;
        Port = port;
        this.configPath = configPath;
    }

    public int Port { get; }

    public IPEndPoint EndPoint => new(IPAddress.Loopback, Port);

    public string Url => $"nats://127.0.0.1:{Port}";

    /// <summary>Path of the nats-server binary, or null when it is not installed.</summary>
    public static string? BinaryPath { get; } = FindBinary();

    /// <summary>Starts nats-server; <paramref name="config"/> is the text of a config file (without listen/port).</summary>
    public static async Task<ReferenceServer> StartAsync(string? config = null, params string[] arguments)
    {
        var binary = BinaryPath ?? throw new InvalidOperationException(
            "nats-server (the Go reference) is not installed; the test command (scripts/test.sh) installs it with apt-get.");
        var port = Ports.GetFreePort();
        List<string> startArguments = ["-a", "127.0.0.1", "-p", port.ToString(System.Globalization.CultureInfo.InvariantCulture)];
        string? configPath = null;
        if (config is not null)
        {
            configPath = Path.Combine(Path.GetTempPath(), $"ref-nats-{Guid.NewGuid():N}.conf");
            await File.WriteAllTextAsync(configPath, config).ConfigureAwait(false);
            startArguments.Add("-c");
            startArguments.Add(configPath);
        }

        // The port was free a moment ago, but test assemblies run side by side and another server may take it before
        // nats-server binds; then nats-server exits and a connection would reach the other server. Only nats-server's
        // own "Listening ... on <port>" line proves the port is its, so wait for that and retry on a new port.
        for (var attempt = 1; ; attempt++)
        {
            var process = ExternalProcess.Start(binary, [.. startArguments, .. arguments]);
            var server = new ReferenceServer(process, port, configPath);
            var listening = await server.WaitUntilListeningAsync(TimeSpan.FromSeconds(10)).ConfigureAwait(false);
            if (listening)
            {
                return server;
            }

            // Disposing waits for the exited process's last lines (the reason it stopped) to be read.
            await process.DisposeAsync().ConfigureAwait(false);
            var log = server.Log;
            if (attempt == 3 || !log.Contains("address already in use", StringComparison.Ordinal))
            {
                if (configPath is not null)
                {
                    File.Delete(configPath);
                }

                throw new InvalidOperationException("nats-server did not start listening:" + Environment.NewLine + log);
            }

            port = Ports.GetFreePort();
            startArguments[3] = port.ToString(System.Globalization.CultureInfo.InvariantCulture);
        }
    }

    /// <summary>Waits for nats-server's own log line saying it listens on <see cref="Port"/>; false when it exits first or the timeout passes.</summary>
    private async Task<bool> WaitUntilListeningAsync(TimeSpan timeout)
    {
        var line = "Listening for client connections on 127.0.0.1:" + Port.ToString(System.Globalization.CultureInfo.InvariantCulture);
        var deadline = DateTime.UtcNow + timeout;
        while (DateTime.UtcNow < deadline)
        {
            if (Log.Contains(line, StringComparison.Ordinal))
            {
                return Ports.Accepts(Port);
            }

            if (process.HasExited)
            {
                return false;
            }

            await Task.Delay(20).ConfigureAwait(false);
        }

        return false;
    }

    /// <summary>What the server logged so far (nats-server logs to standard error), for assertion messages.</summary>
    public string Log => process.ErrorText;

    public async ValueTask DisposeAsync()
    {
        await process.DisposeAsync().ConfigureAwait(false);
        if (configPath is not null)
        {
            File.Delete(configPath);
        }
    }

    private static string? FindBinary()
    {
        var path = Environment.GetEnvironmentVariable("PATH") ?? string.Empty;
        var candidates = path.Split(':', StringSplitOptions.RemoveEmptyEntries).Append("/usr/sbin").Append("/usr/bin").Append("/usr/local/bin");
        return candidates.Select(dir => Path.Combine(dir, "nats-server")).FirstOrDefault(File.Exists);
    }
}
