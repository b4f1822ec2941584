using System.IO.Pipelines;

namespace Broker.Core.Internal.Transport;

/// <summary>
/// Where a socket connection's send loop resumes when output is flushed to it: on the thread pool, except between
/// <see cref="BeginInline"/> and <see cref="EndInline"/>, where it is kept for the producer that flushed to run
/// itself (<see cref="RunKept"/>) once it has let go of the output's lock.
/// </summary>
/// <remarks>
/// One request in flight (request/reply) costs, per direction, a read on one worker and a send on another: the flush
/// woke an idle worker (a futex wake, and its spinning before it sleeps again) only to make one send that the reading
/// thread could have made. A producer whose batch for a connection was small therefore makes that send itself
/// (<see cref="Clients.ConnectionOutput.Flush"/>); a large batch still goes to a worker, so that the send of one batch
/// overlaps the parse of the next. nats-server's <c>flushClients</c> can write inline within a budget the same way
/// (its read loop now passes none and signals the write loop's goroutine, a far cheaper wake than a worker thread's).
/// </remarks>
internal sealed class SendLoopScheduler : PipeScheduler
{
    public static readonly SendLoopScheduler Instance = new();

    // Set while a producer that holds no lock ends its batch (BeginBatch): only then may its flushes run a send loop.
    [ThreadStatic]
    private static bool inBatch;

    // Set by a flush while it may keep the send loop it wakes (BeginInline to EndInline). A flush wakes at most one
    // (the send loop's read) and RunKept runs it; a second one goes to the thread pool.
    [ThreadStatic]
    private static bool accepting;

    [ThreadStatic]
    private static Action<object?>? deferred;

    [ThreadStatic]
    private static object? deferredState;

    private SendLoopScheduler()
    {
    }

    public override void Schedule(Action<object?> action, object? state)
    {
        if (accepting && deferred is null)
        {
            deferred = action;
            deferredState = state;
            return;
        }

        System.Threading.ThreadPool.UnsafeQueueUserWorkItem(action, state, preferLocal: false);
    }

    /// <summary>
    /// Whether a flush on this thread may run the send loop it wakes: inside a batch of a producer that holds no lock
    /// (a NATS connection's read loop). An internal client ends its batches under its publish lock, where a send
    /// that fails would close the connection inline; its flushes keep waking a worker.
    /// </summary>
    public static bool InBatch => inBatch;

    /// <summary>Starts a producer batch whose flushes may send inline; returns what to pass to <see cref="EndBatch"/>.</summary>
    public static bool BeginBatch()
    {
        var outer = inBatch;
        inBatch = true;
        return outer;
    }

    /// <summary>Ends the batch begun by <see cref="BeginBatch"/>.</summary>
    public static void EndBatch(bool outer) => inBatch = outer;

    /// <summary>Starts keeping the send loop that a flush on this thread wakes (call under the output's lock).</summary>
    public static void BeginInline() => accepting = true;

    /// <summary>Stops keeping continuations; those scheduled afterwards go to the thread pool.</summary>
    public static void EndInline() => accepting = false;

    /// <summary>Runs the send loop kept since <see cref="BeginInline"/>, if any; call with no lock held.</summary>
    public static void RunKept()
    {
        if (deferred is { } action)
        {
            var state = deferredState;
            deferred = null;
            deferredState = null;

            // What the send loop sets off (an abort that closes the connection, when a send fails) is not part of the
            // batch: its own flushes wake workers.
            var batch = inBatch;
            inBatch = false;
            try
            {
                action(state);
            }
            finally
            {
                inBatch = batch;
            }
        }
    }
}
