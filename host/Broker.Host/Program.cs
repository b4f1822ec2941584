using Broker.Host.Hosting;

namespace Broker.Host;

internal static class Program
{
    private static Task<int> Main(string[] args)
    {
        // Before anything touches the console, which sets up the runtime's signal handling.
        HostSignals.TakeIgnoredSignals();
        RaiseThreadPoolMinimum();
        return BrokerHost.RunAsync(args, HostEnvironment.FromProcess());
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
