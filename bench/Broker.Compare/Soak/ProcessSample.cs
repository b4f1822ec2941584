using System.Globalization;

namespace Broker.Compare.Soak;

/// <summary>One look at the server process from /proc: resident memory, open descriptors, threads, and our count of clients.</summary>
internal sealed record ProcessSample(TimeSpan At, long Rss, int FileDescriptors, int Threads, int Connections)
{
    /// <summary>Reads <c>/proc/&lt;pid&gt;/status</c> (VmRSS, Threads) and counts <c>/proc/&lt;pid&gt;/fd</c>.</summary>
    public static ProcessSample Read(int processId, TimeSpan at, int connections)
    {
        long rss = 0;
        var threads = 0;
        foreach (var line in File.ReadLines($"/proc/{processId}/status"))
        {
            if (line.StartsWith("VmRSS:", StringComparison.Ordinal))
            {
                rss = long.Parse(line.AsSpan(6).Trim().TrimEnd("kB").Trim(), CultureInfo.InvariantCulture) * 1024;
            }
            else if (line.StartsWith("Threads:", StringComparison.Ordinal))
            {
                threads = int.Parse(line.AsSpan(8).Trim(), CultureInfo.InvariantCulture);
            }
        }

        var fds = Directory.EnumerateFileSystemEntries($"/proc/{processId}/fd").Count();
        return new ProcessSample(at, rss, fds, threads, connections);
    }
}
