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

    /// <summary>What each open descriptor points at (<c>socket:[inode]</c>, a path, ...), by descriptor number.</summary>
    public static Dictionary<string, string> Descriptors(int processId)
    {
        var targets = new Dictionary<string, string>();
        foreach (var entry in Directory.EnumerateFileSystemEntries($"/proc/{processId}/fd"))
        {
            try
            {
                targets[Path.GetFileName(entry)] = new FileInfo(entry).LinkTarget ?? "?";
            }
            catch (IOException)
            {
                // Closed between the listing and the read.
            }
        }

        return targets;
    }

    /// <summary>
    /// The descriptors in <paramref name="now"/> that <paramref name="baseline"/> did not have, by kind (pipe, file,
    /// or a TCP socket with its state from <c>/proc/&lt;pid&gt;/net/tcp</c>: a CLOSE_WAIT socket is one the peer
    /// closed and the server never did).
    /// </summary>
    public static string Leftover(int processId, Dictionary<string, string> baseline, Dictionary<string, string> now)
    {
        var states = TcpStates(processId);
        string Kind(string target)
            => target.StartsWith("socket:[", StringComparison.Ordinal) && states.TryGetValue(target[8..^1], out var state) ? "socket " + state
                : target.StartsWith('/') ? "file " + Path.GetFileName(target) : target.Split(':')[0];
        return string.Join(", ", now.Where(d => !baseline.TryGetValue(d.Key, out var target) || target != d.Value)
            .GroupBy(d => Kind(d.Value))
            .Select(g => $"{g.Count()} {g.Key}"));
    }

    /// <summary>
    /// The descriptors in <paramref name="now"/> that <paramref name="baseline"/> did not have and that are assembly
    /// files: the runtime keeps a loaded assembly's file open, and plugins load some only when first used (TLS, the
    /// file store's compression): not a descriptor a client left behind.
    /// </summary>
    public static int NewAssemblyFiles(Dictionary<string, string> baseline, Dictionary<string, string> now) =>
        now.Count(d => (!baseline.TryGetValue(d.Key, out var target) || target != d.Value)
            && d.Value.StartsWith('/') && d.Value.EndsWith(".dll", StringComparison.OrdinalIgnoreCase));

    private static Dictionary<string, string> TcpStates(int processId)
    {
        var states = new Dictionary<string, string>();
        foreach (var table in new[] { "tcp", "tcp6" })
        {
            var path = $"/proc/{processId}/net/{table}";
            if (!File.Exists(path))
            {
                continue;
            }

            foreach (var line in File.ReadLines(path).Skip(1))
            {
                var fields = line.Split(' ', StringSplitOptions.RemoveEmptyEntries);
                if (fields.Length > 9)
                {
                    states[fields[9]] = fields[3] switch
                    {
                        "01" => "ESTABLISHED",
                        "06" => "TIME_WAIT",
                        "07" => "CLOSE",
                        "08" => "CLOSE_WAIT",
                        "0A" => "LISTEN",
                        var other => "state " + other,
                    };
                }
            }
        }

        return states;
    }
}
