using System.Runtime.InteropServices;

namespace Broker.Compare.Servers;

/// <summary>
/// The open-file limit (RLIMIT_NOFILE) of this process, which the servers it starts inherit. The connection-scale
/// row needs one descriptor per connection in the load generator and in the server, plus headroom.
/// </summary>
internal static partial class FileDescriptorLimit
{
    private const int RlimitNoFile = 7;

    /// <summary>Descriptors needed beyond the connections (runtime, pipes, listeners, the probe).</summary>
    public const int Headroom = 256;

    /// <summary>The current soft limit.</summary>
    public static ulong Current => GetLimit().Current;

    /// <summary>The hard limit, the most <see cref="Ensure"/> can raise to without privileges.</summary>
    public static ulong Hard => GetLimit().Maximum;

    /// <summary>
    /// Makes sure this process (and the servers it starts from now on) may open <paramref name="needed"/>
    /// descriptors, raising the soft limit (and, as root, the hard limit) when it is lower.
    /// </summary>
    /// <exception cref="InvalidOperationException">The limit is too low and cannot be raised; the message says what to do.</exception>
    public static void Ensure(ulong needed)
    {
        var limit = GetLimit();
        if (limit.Current >= needed)
        {
            return;
        }

        var raised = new RLimit { Current = needed, Maximum = Math.Max(limit.Maximum, needed) };
        if (SetRLimit(RlimitNoFile, ref raised) != 0)
        {
            throw new InvalidOperationException(
                $"The run needs {needed:N0} open files per process but the limit is {limit.Current:N0} (hard {limit.Maximum:N0}) " +
                $"and could not be raised (errno {Marshal.GetLastPInvokeError()}). Run 'ulimit -n {needed}' (as root, or raise the hard limit) " +
                "before the harness, or pass smaller --scale counts.");
        }
    }

    private static RLimit GetLimit()
    {
        var limit = default(RLimit);
        if (GetRLimit(RlimitNoFile, ref limit) != 0)
        {
            throw new InvalidOperationException($"getrlimit failed (errno {Marshal.GetLastPInvokeError()}).");
        }

        return limit;
    }

    [LibraryImport("libc", EntryPoint = "getrlimit", SetLastError = true)]
    private static partial int GetRLimit(int resource, ref RLimit limit);

    [LibraryImport("libc", EntryPoint = "setrlimit", SetLastError = true)]
    private static partial int SetRLimit(int resource, ref RLimit limit);

    [StructLayout(LayoutKind.Sequential)]
    private struct RLimit
    {
        public ulong Current;
        public ulong Maximum;
    }
}
