using System.IO.Pipelines;
using System.Net.Sockets;
using System.Runtime.CompilerServices;
using Broker.Abstractions;

namespace Broker.Core.Internal.Transport;

/// <summary>
/// A connection's output sent on demand (<see cref="IOnDemandTransport.UseOnDemandOutput"/>): a pipe is borrowed from
/// <see cref="OutputPipePool"/> with the first write and a send loop runs while it holds bytes; once everything is sent
/// and nobody is writing, the pipe goes back and the loop ends. A connection with nothing queued holds no pipe, no
/// segment and no parked loop (issue 25). The pipe keeps the output contract of a connection's own
/// (<see cref="TransportConnection"/>): flushes complete at once until three quarters of max_pending are queued.
/// </summary>
/// <remarks>
/// The loop is started on the thread pool, as the connection's own send loop is continued there: a producer does not
/// make the send's syscall. It is a pooled <see cref="ValueTask"/> method, so a burst allocates nothing in the steady
/// state; <see cref="OnLoopEnded"/> collects its result (which returns the pooled state machine). Only one loop runs:
/// a flush that comes while one is ending sets <see cref="restart"/> and the ending loop runs again. State changes
/// between the writer, the loop and an abort happen under the writer's own monitor (nothing outside locks on it).
/// </remarks>
internal sealed class SocketOutputWriter : PipeWriter, IThreadPoolWorkItem
{
    private readonly SocketConnection connection;
    private readonly OutputPipePool pool;
    // The socket written through the process's epoll set (Linux; issue 25), or null: the runtime's socket sends.
    private readonly EpollSocket? epoll;
    private Pipe? pipe;
    private long written;
    private long sent;

    // Memory was handed out and not flushed yet: the loop must not give the pipe back.
    private bool writing;
    private bool sending;
    private bool restart;
    private bool completed;
    private bool ended;

    private ConfiguredValueTaskAwaitable.ConfiguredValueTaskAwaiter loopEnd;
    private Action? onLoopEnded;
    private TaskCompletionSource? endedSignal;

    public SocketOutputWriter(SocketConnection connection, OutputPipePool pool, EpollSocket? epoll = null)
    {
        this.connection = connection;
        this.pool = pool;
        this.epoll = epoll;
    }

    /// <summary>The socket's epoll side when output is sent through it, else null.</summary>
    internal EpollSocket? Epoll => epoll;

    /// <summary>Bytes written and not yet handed to the socket.</summary>
    public long PendingOutputBytes => Math.Max(Volatile.Read(ref written) - Volatile.Read(ref sent), 0);

    /// <summary>Whether a pipe is borrowed now (tests read it: an idle connection holds none).</summary>
    internal bool HoldsPipe
    {
        get
        {
            lock (this)
            {
                return pipe is not null;
            }
        }
    }

    public override Memory<byte> GetMemory(int sizeHint = 0) => Borrow().Writer.GetMemory(sizeHint);

    public override Span<byte> GetSpan(int sizeHint = 0) => Borrow().Writer.GetSpan(sizeHint);

    public override void Advance(int bytes)
    {
        Volatile.Read(ref pipe)!.Writer.Advance(bytes);
        Volatile.Write(ref written, written + bytes);
    }

    public override ValueTask<FlushResult> FlushAsync(CancellationToken cancellationToken = default)
    {
        ValueTask<FlushResult> flush;
        var start = false;
        lock (this)
        {
            writing = false;
            if (pipe is null)
            {
                return new ValueTask<FlushResult>(new FlushResult(isCanceled: false, isCompleted: ended));
            }

            flush = pipe.Writer.FlushAsync(cancellationToken);
            if (!ended)
            {
                start = StartLoop();
            }
        }

        if (start)
        {
            ThreadPool.UnsafeQueueUserWorkItem(this, preferLocal: false);
        }

        return flush;
    }

    public override void CancelPendingFlush()
    {
        lock (this)
        {
            pipe?.Writer.CancelPendingFlush();
        }
    }

    public override void Complete(Exception? exception = null)
    {
        var start = false;
        var finishIdle = false;
        lock (this)
        {
            if (completed)
            {
                return;
            }

            completed = true;
            writing = false;
            if (pipe is not null)
            {
                // The loop sends what is left, then closes gracefully.
                pipe.Writer.Complete(exception);
                start = !ended && StartLoop();
            }
            else
            {
                finishIdle = !ended;
            }
        }

        if (start)
        {
            ThreadPool.UnsafeQueueUserWorkItem(this, preferLocal: false);
        }
        else if (finishIdle)
        {
            _ = FinishIdleAsync();
        }
    }

    /// <summary>Completes once nothing more will be sent (the output closed, failed or was aborted).</summary>
    public Task WhenEnded()
    {
        lock (this)
        {
            if (ended)
            {
                return Task.CompletedTask;
            }

            endedSignal ??= new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
            return endedSignal.Task;
        }
    }

    /// <summary>Ends the send loop's pending read (the connection is aborted).</summary>
    public void CancelSending()
    {
        lock (this)
        {
            pipe?.Reader.CancelPendingRead();
        }
    }

    void IThreadPoolWorkItem.Execute() => RunLoop();

    private Pipe Borrow()
    {
        lock (this)
        {
            writing = true;
            return pipe ??= pool.Rent();
        }
    }

    // Under the monitor: true when the caller is to start the loop (none runs); else an ending loop runs once more.
    private bool StartLoop()
    {
        if (sending)
        {
            restart = true;
            return false;
        }

        sending = true;
        return true;
    }

    private void RunLoop()
    {
        while (true)
        {
            var loop = SendLoopAsync();
            if (!loop.IsCompleted)
            {
                loopEnd = loop.ConfigureAwait(false).GetAwaiter();
                loopEnd.UnsafeOnCompleted(onLoopEnded ??= OnLoopEnded);
                return;
            }

            loop.GetAwaiter().GetResult();
            if (!LoopEnded())
            {
                return;
            }
        }
    }

    private void OnLoopEnded()
    {
        var ending = loopEnd;
        loopEnd = default;
        ending.GetResult();
        if (LoopEnded())
        {
            RunLoop();
        }
    }

    // True when a flush came while the loop was ending: it runs again.
    private bool LoopEnded()
    {
        lock (this)
        {
            if (restart && !ended)
            {
                restart = false;
                return true;
            }

            restart = false;
            sending = false;
            return false;
        }
    }

    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder))]
    private async ValueTask SendLoopAsync()
    {
        Pipe? current;
        lock (this)
        {
            current = pipe;
        }

        if (current is null)
        {
            return;
        }

        var reader = current.Reader;
        var graceful = false;
        var returned = false;
        try
        {
            while (true)
            {
                ReadResult result;
                bool read;
                lock (this)
                {
                    read = reader.TryRead(out result);
                    if (!read && !writing && !completed)
                    {
                        // Everything was sent and nobody writes: the pipe goes back, this loop ends.
                        current.Writer.Complete();
                        reader.Complete();
                        pipe = null;
                        returned = true;
                        pool.Return(current);
                        return;
                    }
                }

                if (!read)
                {
                    result = await reader.ReadAsync().ConfigureAwait(false);
                }

                if (result.IsCanceled)
                {
                    break;
                }

                var buffer = await connection.SendAsync(result.Buffer, epoll).ConfigureAwait(false);
                Volatile.Write(ref sent, sent + buffer.Length);
                reader.AdvanceTo(buffer.End);
                if (result.IsCompleted && buffer.End.Equals(result.Buffer.End))
                {
                    graceful = !connection.IsAborted;
                    break;
                }
            }

            if (graceful)
            {
                await connection.CloseGracefullyAsync().ConfigureAwait(false);
            }
        }
        catch (Exception ex) when (ex is SocketException or ObjectDisposedException)
        {
        }
        finally
        {
            if (!returned)
            {
                // The pipe is kept with its reader completed: later writes are accepted and dropped, as with the
                // connection's own pipe after its send loop ended.
                await reader.CompleteAsync().ConfigureAwait(false);
                End();
            }
        }
    }

    private async Task FinishIdleAsync()
    {
        try
        {
            if (!connection.IsAborted)
            {
                await connection.CloseGracefullyAsync().ConfigureAwait(false);
            }
        }
        catch (Exception ex) when (ex is SocketException or ObjectDisposedException)
        {
        }
        finally
        {
            End();
        }
    }

    private void End()
    {
        TaskCompletionSource? signal;
        lock (this)
        {
            ended = true;
            signal = endedSignal;
        }

        connection.Abort(connection.CloseReason ?? "closed");
        signal?.TrySetResult();
    }
}
