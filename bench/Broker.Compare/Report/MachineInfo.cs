using System.Globalization;
using System.Runtime.InteropServices;

namespace Broker.Compare.Report;

/// <summary>The machine a comparison ran on, as the report records it.</summary>
internal sealed record MachineInfo(int Cores, string CpuModel, long MemoryBytes, string OperatingSystem, string DotNet)
{
    public static MachineInfo Collect() => new(
        Environment.ProcessorCount,
        ReadField("/proc/cpuinfo", "model name") ?? RuntimeInformation.ProcessArchitecture.ToString(),
        ReadMemTotal(),
        OperatingSystemName(),
        RuntimeInformation.FrameworkDescription);

    /// <summary>The 1, 5 and 15 minute load averages (from <c>/proc/loadavg</c>), to show how busy the machine was.</summary>
    public static string LoadAverage()
    {
        try
        {
            var fields = File.ReadAllText("/proc/loadavg").Split(' ');
            return string.Join(" ", fields.Take(3));
        }
        catch (IOException)
        {
            return "unknown";
        }
    }

    private static string OperatingSystemName()
    {
        var pretty = ReadField("/etc/os-release", "PRETTY_NAME", '=')?.Trim('"') ?? RuntimeInformation.OSDescription;
        var kernel = File.Exists("/proc/sys/kernel/osrelease") ? File.ReadAllText("/proc/sys/kernel/osrelease").Trim() : null;
        return kernel is null ? pretty : $"{pretty}, Linux {kernel}";
    }

    private static long ReadMemTotal()
    {
        var value = ReadField("/proc/meminfo", "MemTotal");
        return value is null ? 0 : long.Parse(value.Replace("kB", string.Empty, StringComparison.Ordinal).Trim(), CultureInfo.InvariantCulture) * 1024;
    }

    private static string? ReadField(string path, string key, char separator = ':')
    {
        if (!File.Exists(path))
        {
            return null;
        }

        foreach (var line in File.ReadLines(path))
        {
            var index = line.IndexOf(separator, StringComparison.Ordinal);
            if (index > 0 && line[..index].Trim() == key)
            {
                return line[(index + 1)..].Trim();
            }
        }

        return null;
    }
}
