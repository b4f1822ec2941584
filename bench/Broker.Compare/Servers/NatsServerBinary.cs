using System.Diagnostics;

namespace Broker.Compare.Servers;

/// <summary>
/// The reference server: Debian's <c>nats-server</c> package, found on PATH or in the usual directories, and
/// installed with apt-get when missing and the harness runs as root.
/// </summary>
internal static class NatsServerBinary
{
    private static readonly string[] Directories = ["/usr/sbin", "/usr/bin", "/usr/local/bin"];

    /// <summary>The path of nats-server, installing it first when possible.</summary>
    /// <exception cref="InvalidOperationException">Not installed and not installable here.</exception>
    public static string Locate(string? explicitPath, TextWriter log)
    {
        ArgumentNullException.ThrowIfNull(log);
        if (explicitPath is not null)
        {
            return File.Exists(explicitPath) ? explicitPath : throw new InvalidOperationException($"--nats-server {explicitPath}: no such file.");
        }

        if (Find() is { } found)
        {
            return found;
        }

        if (Environment.UserName != "root")
        {
            throw new InvalidOperationException("nats-server is not installed; install Debian's package: sudo apt-get install nats-server");
        }

        log.WriteLine("nats-server is not installed: apt-get install nats-server");
        if (Run("apt-get", "install -y -qq nats-server") != 0)
        {
            Run("apt-get", "update -qq");
            Run("apt-get", "install -y -qq nats-server");
        }

        return Find() ?? throw new InvalidOperationException("apt-get could not install nats-server.");
    }

    /// <summary>The version nats-server reports (<c>nats-server -v</c>), for example <c>v2.9.10</c>.</summary>
    public static string Version(string path)
    {
        using var process = Process.Start(new ProcessStartInfo(path, "-v") { RedirectStandardOutput = true, RedirectStandardError = true, UseShellExecute = false })!;
        var output = process.StandardOutput.ReadToEnd() + process.StandardError.ReadToEnd();
        process.WaitForExit(10_000);
        var text = output.Trim();
        var index = text.LastIndexOf(' ');
        return index >= 0 ? text[(index + 1)..] : text;
    }

    public static ServerLaunch Launch(string path, string version)
        => new("nats-server", path, ["-a", "127.0.0.1", "-p", "{port}"], $"nats-server {version} ({path})");

    private static string? Find()
    {
        var path = Environment.GetEnvironmentVariable("PATH") ?? string.Empty;
        return path.Split(':', StringSplitOptions.RemoveEmptyEntries).Concat(Directories)
            .Select(directory => Path.Combine(directory, "nats-server"))
            .FirstOrDefault(File.Exists);
    }

    private static int Run(string fileName, string arguments)
    {
        var startInfo = new ProcessStartInfo(fileName, arguments) { UseShellExecute = false };
        startInfo.Environment["DEBIAN_FRONTEND"] = "noninteractive";
        using var process = Process.Start(startInfo)!;
        process.WaitForExit();
        return process.ExitCode;
    }
}
