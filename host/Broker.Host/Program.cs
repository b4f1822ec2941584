using Broker.Host.Hosting;

namespace Broker.Host;

internal static class Program
{
    private static Task<int> Main(string[] args)
    {
        // Before anything touches the console, which sets up the runtime's signal handling.
        HostSignals.TakeIgnoredSignals();
        PreferInlineSocketCompletions();
        RaiseThreadPoolMinimum();
        return BrokerHost.RunAsync(args, HostEnvironment.FromProcess());
    }

    /// <summary>
    /// Has the runtime's socket engine run receive completions on its epoll thread, so that a read is parsed where it
    /// arrived instead of being handed to a thread-pool worker (a work item, and idle workers spinning around it: most of
    /// a one-in-flight request's CPU, docs/benchmarks.md "inline"). The runtime reads the variable once, when its socket
    /// engine is first used (no runtimeconfig or AppContext setting exists for it), so it must be set before any socket
    /// is made: here, first thing. Sends are kept off that thread (SocketSender) and no read path blocks (a stalled
    /// subscriber is awaited, StallPolicy). An operator's own value wins (<c>0</c> turns it off). The embedded broker
    /// leaves the variable alone: the process is the application's.
    /// </summary>
    private static void PreferInlineSocketCompletions()
    {
        const string Name = "DOTNET_SYSTEM_NET_SOCKETS_INLINE_COMPLETIONS";
        if (Environment.GetEnvironmentVariable(Name) is null)
        {
            Environment.SetEnvironmentVariable(Name, "1");
        }
    }

    /// <summary>
    /// Lets the thread pool start up to four workers per core without its injection delay. By default it starts one
    /// per core and adds more about twice a second while work waits; producers that meet on a busy subscriber's
    /// output lock wait briefly, and with the default minimum a freshly started broker under many-to-many load spent
    /// up to twice the CPU per message until the pool had grown (docs/benchmarks.md, optimisation history). A
    /// minimum set by the operator (runtimeconfig or <c>DOTNET_ThreadPool_ForceMinWorkerThreads</c>) that is higher wins.
    /// </summary>
    private static void RaiseThreadPoolMinimum()
    {
        ThreadPool.GetMinThreads(out var workers, out var completionPorts);
        var wanted = Environment.ProcessorCount * 4;
        if (workers < wanted)
        {
            ThreadPool.SetMinThreads(wanted, completionPorts);
        }
    }
}
