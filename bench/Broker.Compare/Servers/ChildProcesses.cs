using System.Diagnostics;

namespace Broker.Compare.Servers;

/// <summary>
/// Every server process the harness started and has not stopped yet, killed when the harness exits or is
/// interrupted (Ctrl+C, SIGTERM), so no benchmark server outlives it.
/// </summary>
internal static class ChildProcesses
{
    private static readonly HashSet<Process> Running = [];
    private static int hooked;

    public static void Register(Process process)
    {
        if (Interlocked.Exchange(ref hooked, 1) == 0)
        {
            AppDomain.CurrentDomain.ProcessExit += (_, _) => KillAll();
            Console.CancelKeyPress += (_, _) => KillAll();
        }

        lock (Running)
        {
            Running.Add(process);
        }
    }

    public static void Unregister(Process process)
    {
        lock (Running)
        {
            Running.Remove(process);
        }
    }

    private static void KillAll()
    {
        Process[] all;
        lock (Running)
        {
            all = [.. Running];
        }

        foreach (var process in all)
        {
            try
            {
                process.Kill(entireProcessTree: true);
            }
            catch (InvalidOperationException)
            {
            }
        }
    }
}
