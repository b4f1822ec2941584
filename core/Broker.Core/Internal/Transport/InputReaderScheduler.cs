using System.IO.Pipelines;

namespace Broker.Core.Internal.Transport;

/// <summary>
/// Where a socket connection's input is parsed: on the receiving thread, or on a thread-pool worker. The receive loop
/// decides per read (<see cref="FlushAsync"/>); the input pipe's reader continuation (the protocol's read loop) runs
/// where it decided.
/// </summary>
/// <remarks>
/// <para>
/// The host runs socket completions on the runtime's epoll threads (<c>DOTNET_SYSTEM_NET_SOCKETS_INLINE_COMPLETIONS</c>,
/// host/Broker.Host/Program.cs). For a small read (a request, a reply, a PING: one request in flight) parsing where it
/// arrived removes a work item and the idle workers' spinning around it, most of such a request's CPU. For a large read
/// (a publisher streaming) it would make the epoll thread parse the whole batch before it issues the next receive:
/// reading and parsing no longer overlap, and publish-only throughput under NATS.Client.Core fell (docs/benchmarks.md
/// "inline"). So a large read's parse goes to a worker and the receive loop receives again at once; reads that arrive
/// while that worker parses are appended to the pipe, which the worker drains before its read loop waits again.
/// </para>
/// <para>
/// A receive loop that runs on a worker already (completions not inline: the embedded broker, or the operator set the
/// variable to <c>0</c>) parses every read where it is, as before: handing it to a second worker would only add a hop.
/// </para>
/// </remarks>
internal sealed class InputReaderScheduler : PipeScheduler
{
    public static readonly InputReaderScheduler Instance = new();

    // Set by FlushAsync for the one reader continuation its flush wakes; cleared before that continuation runs, so
    // that anything it schedules (another pipe's completion, say) goes to the thread pool.
    [ThreadStatic]
    private static bool parseHere;

    private InputReaderScheduler()
    {
    }

    public override void Schedule(Action<object?> action, object? state)
    {
        if (parseHere)
        {
            parseHere = false;
            action(state);
            return;
        }

        System.Threading.ThreadPool.UnsafeQueueUserWorkItem(action, state, preferLocal: false);
    }

    /// <summary>
    /// Whether the parse of a read may run on the receiving thread: always on a worker; on the socket engine's own
    /// thread only when <paramref name="small"/>.
    /// </summary>
    public static bool ParseHere(bool small) => small || Thread.CurrentThread.IsThreadPoolThread;

    /// <summary>
    /// Flushes a read into the input pipe; the read loop it wakes, if any, runs on this thread when
    /// <paramref name="here"/> (before this returns), else on a worker.
    /// </summary>
    public static ValueTask<FlushResult> FlushAsync(PipeWriter writer, bool here)
    {
        if (!here)
        {
            return writer.FlushAsync();
        }

        parseHere = true;
        try
        {
            return writer.FlushAsync();
        }
        finally
        {
            parseHere = false;
        }
    }
}
