using System.Diagnostics;
using System.Globalization;

namespace Broker.Compare.Load.C;

/// <summary>
/// The C load generator (<c>natsbench.c</c> beside this file, on libnats, the official NATS C client): compiled once per
/// harness process with gcc and <c>pkg-config libnats</c> into a temporary folder (libnats-dev and gcc are installed
/// with apt-get when missing and the harness runs as root, as nats-server is), then started once per run.
/// </summary>
internal static class CLoadGenerator
{
    private static readonly Lazy<string> Program = new(Build, LazyThreadSafetyMode.ExecutionAndPublication);

    /// <summary>Runs the generator with <paramref name="arguments"/> and returns its one result line's fields.</summary>
    public static CResult Run(IReadOnlyList<string> arguments, CancellationToken cancellationToken)
    {
        var start = new ProcessStartInfo(Program.Value) { RedirectStandardOutput = true, RedirectStandardError = true, UseShellExecute = false };
        foreach (var argument in arguments)
        {
            start.ArgumentList.Add(argument);
        }

        using var process = Process.Start(start) ?? throw new InvalidOperationException("natsbench did not start");
        var output = process.StandardOutput.ReadToEndAsync(cancellationToken);
        var error = process.StandardError.ReadToEndAsync(cancellationToken);
        if (!process.WaitForExit(WorkloadTiming.RunTimeout))
        {
            process.Kill(entireProcessTree: true);
            throw new TimeoutException($"natsbench {string.Join(' ', arguments)} did not finish within {WorkloadTiming.RunTimeout}");
        }

        process.WaitForExit();
        if (process.ExitCode != 0)
        {
            throw new InvalidOperationException($"natsbench {string.Join(' ', arguments)} failed ({process.ExitCode}): {error.Result.Trim()}");
        }

        var fields = output.Result.Trim().Split(' ');
        return fields.Length == 4
            ? new CResult(
                long.Parse(fields[0], CultureInfo.InvariantCulture),
                TimeSpan.FromTicks(long.Parse(fields[1], CultureInfo.InvariantCulture) / 100),
                double.Parse(fields[2], CultureInfo.InvariantCulture),
                double.Parse(fields[3], CultureInfo.InvariantCulture))
            : throw new InvalidOperationException($"natsbench printed '{output.Result.Trim()}'");
    }

    private static string Build()
    {
        EnsureInstalled();
        var directory = Path.Combine(Path.GetTempPath(), "broker-compare-c-" + Environment.ProcessId.ToString(CultureInfo.InvariantCulture));
        Directory.CreateDirectory(directory);
        var program = Path.Combine(directory, "natsbench");
        var flags = Capture("pkg-config", ["--cflags", "--libs", "libnats"]);
        List<string> arguments = ["-O2", "-Wall", "-Werror", "-o", program, SourcePath()];
        arguments.AddRange(flags.Split(' ', StringSplitOptions.RemoveEmptyEntries));
        arguments.Add("-lpthread");
        Capture("gcc", arguments);
        AppDomain.CurrentDomain.ProcessExit += (_, _) =>
        {
            try
            {
                Directory.Delete(directory, recursive: true);
            }
            catch (IOException)
            {
            }
        };
        return program;
    }

    private static string SourcePath()
    {
        // Copied beside the harness by the build (Broker.Compare.csproj), so it is found from any working directory.
        var path = Path.Combine(AppContext.BaseDirectory, "natsbench.c");
        return File.Exists(path) ? path : throw new FileNotFoundException("natsbench.c is not beside the harness", path);
    }

    private static void EnsureInstalled()
    {
        if (Exit("pkg-config", ["--exists", "libnats"]) == 0 && Exit("gcc", ["--version"]) == 0)
        {
            return;
        }

        Console.WriteLine("libnats-dev or gcc is not installed: apt-get install libnats-dev gcc pkg-config");
        if (Exit("apt-get", ["install", "-y", "-qq", "libnats-dev", "gcc", "pkg-config"]) != 0)
        {
            Exit("apt-get", ["update", "-qq"]);
            if (Exit("apt-get", ["install", "-y", "-qq", "libnats-dev", "gcc", "pkg-config"]) != 0)
            {
                throw new InvalidOperationException("The C generator needs libnats-dev, gcc and pkg-config: sudo apt-get install libnats-dev gcc pkg-config");
            }
        }
    }

    private static string Capture(string file, IReadOnlyList<string> arguments)
    {
        var (exit, output, error) = Execute(file, arguments);
        return exit == 0 ? output.Trim() : throw new InvalidOperationException($"{file} {string.Join(' ', arguments)} failed ({exit}): {error.Trim()}");
    }

    private static int Exit(string file, IReadOnlyList<string> arguments)
    {
        try
        {
            return Execute(file, arguments).Exit;
        }
        catch (System.ComponentModel.Win32Exception)
        {
            // Not installed at all.
            return -1;
        }
    }

    private static (int Exit, string Output, string Error) Execute(string file, IReadOnlyList<string> arguments)
    {
        var start = new ProcessStartInfo(file) { RedirectStandardOutput = true, RedirectStandardError = true, UseShellExecute = false };
        foreach (var argument in arguments)
        {
            start.ArgumentList.Add(argument);
        }

        using var process = Process.Start(start) ?? throw new InvalidOperationException($"{file} did not start");
        var output = process.StandardOutput.ReadToEndAsync();
        var error = process.StandardError.ReadToEndAsync();
        process.WaitForExit();
        return (process.ExitCode, output.Result, error.Result);
    }
}

/// <summary>One run of the C generator: units completed, the time they took, request round-trip percentiles (0 for pub/sub).</summary>
internal sealed record CResult(long Units, TimeSpan Elapsed, double P50Microseconds, double P99Microseconds);
