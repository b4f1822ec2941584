using System.Diagnostics;
using System.Reflection;

namespace Broker.Compare.Servers;

/// <summary>How the harness runs our broker.</summary>
internal enum OursMode
{
    /// <summary>The host executable when it starts; otherwise the embedded fallback, with a warning in the report.</summary>
    Auto,

    /// <summary>Only the host executable (<c>dotnet Broker.Host.dll -a 127.0.0.1 -p PORT</c>).</summary>
    Host,

    /// <summary><see cref="Core.BrokerServer"/> with default options in a child process (<c>Broker.Compare serve</c>).</summary>
    Embedded,
}

/// <summary>
/// Finds (building it when missing) and launches our broker. The product is the host executable; while the host
/// cannot serve yet, <see cref="OursMode.Auto"/> falls back to the same broker core embedded in a child process
/// of this harness, and says so.
/// </summary>
internal static class OurBroker
{
    /// <summary>The configuration this harness was built in; the host is taken from the same one.</summary>
    public static string Configuration { get; } =
        typeof(OurBroker).Assembly.GetCustomAttribute<AssemblyConfigurationAttribute>()?.Configuration ?? "Release";

    /// <summary>The repository root (the directory holding Broker.sln), searched upward from the harness and the working directory.</summary>
    public static string RepoRoot()
    {
        foreach (var start in new[] { AppContext.BaseDirectory, Environment.CurrentDirectory })
        {
            for (var directory = new DirectoryInfo(start); directory is not null; directory = directory.Parent)
            {
                if (File.Exists(Path.Combine(directory.FullName, "Broker.sln")))
                {
                    return directory.FullName;
                }
            }
        }

        throw new InvalidOperationException("Cannot find the repository root (Broker.sln) above the harness or the working directory.");
    }

    /// <summary>Broker.Host.dll: the given path, or the build output of this configuration, built when missing.</summary>
    public static string LocateHost(string? explicitPath, TextWriter log)
    {
        ArgumentNullException.ThrowIfNull(log);
        if (explicitPath is not null)
        {
            return File.Exists(explicitPath) ? Path.GetFullPath(explicitPath) : throw new InvalidOperationException($"--host-dll {explicitPath}: no such file.");
        }

        var root = RepoRoot();
        var dll = Path.Combine(root, "host", "Broker.Host", "bin", Configuration, "net10.0", "Broker.Host.dll");
        if (!File.Exists(dll))
        {
            log.WriteLine($"building host/Broker.Host ({Configuration})");
            var project = Path.Combine(root, "host", "Broker.Host", "Broker.Host.csproj");
            using var build = Process.Start(new ProcessStartInfo("dotnet", $"build \"{project}\" -c {Configuration} -nologo -v quiet") { UseShellExecute = false })!;
            build.WaitForExit();
            if (build.ExitCode != 0 || !File.Exists(dll))
            {
                throw new InvalidOperationException($"Building {project} failed (exit code {build.ExitCode}).");
            }
        }

        if (Configuration != "Release")
        {
            log.WriteLine($"warning: the harness and host are {Configuration} builds; numbers are only meaningful in Release");
        }

        return dll;
    }

    public static ServerLaunch HostLaunch(string hostDll)
        => new("ours", "dotnet", [hostDll, "-a", "127.0.0.1", "-p", "{port}"], $"Broker.Host ({Configuration}, {RepoRelative(hostDll)})");

    /// <summary>This harness in <c>serve</c> mode: the broker core with default options, in its own process.</summary>
    public static ServerLaunch EmbeddedLaunch()
    {
        var self = typeof(OurBroker).Assembly.Location;

        // When the harness is loaded by a test project its runtimeconfig may not be beside it; use the bench build.
        if (!File.Exists(Path.ChangeExtension(self, ".runtimeconfig.json")))
        {
            self = Path.Combine(RepoRoot(), "bench", "Broker.Compare", "bin", Configuration, "net10.0", "Broker.Compare.dll");
        }

        return new("ours", "dotnet", [self, "serve", "-a", "127.0.0.1", "-p", "{port}"], $"BrokerServer embedded in a child process (Broker.Compare serve, {Configuration})");
    }

    /// <summary>
    /// Picks the launch for <paramref name="mode"/>. For <see cref="OursMode.Auto"/> the host is started once as a
    /// probe; when it cannot serve, the embedded launch is used and <paramref name="fallbackReason"/> says why.
    /// </summary>
    public static ServerLaunch Choose(OursMode mode, string? hostDll, TextWriter log, CancellationToken cancellationToken, out string? fallbackReason)
    {
        ArgumentNullException.ThrowIfNull(log);
        fallbackReason = null;
        if (mode == OursMode.Embedded)
        {
            return EmbeddedLaunch();
        }

        var host = HostLaunch(LocateHost(hostDll, log));
        if (mode == OursMode.Host)
        {
            return host;
        }

        try
        {
            using var probe = ServerProcess.Start(host, cancellationToken);
            return host;
        }
        catch (ServerStartException ex)
        {
            fallbackReason = "Broker.Host could not serve (" + FirstLine(ex.Message) + ")";
            log.WriteLine($"warning: {fallbackReason}; measuring the embedded broker instead");
            return EmbeddedLaunch();
        }
    }

    /// <summary>The path relative to the repository when it lies inside it, so reports do not record a checkout's location.</summary>
    private static string RepoRelative(string path)
    {
        var relative = Path.GetRelativePath(RepoRoot(), path);
        return relative.StartsWith("..", StringComparison.Ordinal) || Path.IsPathRooted(relative) ? path : relative;
    }

    private static string FirstLine(string text)
    {
        var newline = text.IndexOf('\n', StringComparison.Ordinal);
        return (newline < 0 ? text : text[..newline]).Trim();
    }
}
