using System.IO.Pipelines;
using System.Net.Sockets;

namespace Broker.Core.Internal.Transport;

/// <summary>
/// The receive and send loops. Neither stays parked while the connection is idle: each runs until it would wait for
/// the peer or the application, then leaves that wait pending with a callback (a zero-byte receive, a read of the
/// output pipe) and returns, and the callback starts it again. An idle connection so holds two delegates instead of two
/// async state machines (about 480 B; issue 25); an await inside a busy period still works as before.
/// </summary>
internal sealed partial class SocketConnection
{
    /// <summary>The close reason reported when a send blocked longer than the write deadline.</summary>
    public const string WriteDeadlineReason = "Slow Consumer (Write Deadline)";

    // How long a closing connection waits for the peer to close after our last bytes went out. Closing a socket
    // with unread input makes the kernel send RST, which can destroy the final -ERR before the peer reads it.
    private static readonly TimeSpan LingerTimeout = TimeSpan.FromSeconds(2);

    // The most one send call hands the kernel. A peer that reads slowly then shows progress as it reads (the broker
    // tells a slow reader from a stopped one by it, StallPolicy) rather than once a whole backlog has gone.
    private const int MaxSendBytes = 256 * 1024;

    // Input that arrives after the application stopped reading is discarded here.
    private static readonly byte[] DrainBuffer = new byte[4096];

    // The receive loop's state between its runs (it was the loop's locals).
    private ReceiveSizing sizing;

    // The wait each loop left pending when it returned, completed (its result taken) by the loop's next run.
    private ValueTask<int> idleReceive;
    private ValueTask<ReadResult> idleRead;

    // The callbacks that start the loops again, made at the first idle wait of each and kept.
    private Action? onReceivable;
    private Action? onOutput;

    // Set when each loop has ended for good; DisposeAsync and the send loop's linger wait on them.
    private EndSignal receiveEnded;
    private EndSignal sendEnded;

    internal void CheckWriteDeadline(long now, long deadlineMilliseconds)
    {
        var started = SendStartedAt;
        if (started != 0 && now - started > deadlineMilliseconds)
        {
            Abort(WriteDeadlineReason);
        }
    }

    private void OnReceivable() => _ = ReceiveAsync(woken: true);

    private void OnOutput() => _ = SendAsync(woken: true);

    /// <summary>
    /// Receives until the connection is idle, then leaves a zero-byte receive pending (it waits for data without
    /// holding a buffer) with <see cref="OnReceivable"/> to call when data arrives, and returns.
    /// </summary>
    /// <param name="woken">Called back: the pending zero-byte receive has completed and its result is to be taken.</param>
    private async Task ReceiveAsync(bool woken)
    {
        var writer = input.Writer;
        var parked = false;
        try
        {
            while (true)
            {
                if (woken)
                {
                    var wait = idleReceive;
                    idleReceive = default;
                    woken = false;
                    wait.GetAwaiter().GetResult();
                }
                else if (sizing.WaitFirst)
                {
                    // A busy connection skips the wait (ReceiveSizing).
                    var wait = socket.ReceiveAsync(Memory<byte>.Empty, SocketFlags.None);
                    if (!wait.IsCompleted)
                    {
                        idleReceive = wait;
                        parked = true;
                        wait.ConfigureAwait(false).GetAwaiter().UnsafeOnCompleted(onReceivable ??= OnReceivable);
                        return;
                    }

                    wait.GetAwaiter().GetResult();
                }

                var memory = writer.GetMemory(sizing.Size);
                var received = await socket.ReceiveAsync(memory, SocketFlags.None).ConfigureAwait(false);
                if (received == 0)
                {
                    break;
                }

                writer.Advance(received);
                sizing.Record(received, memory.Length);
                var flush = await writer.FlushAsync().ConfigureAwait(false);
                if (flush.IsCanceled)
                {
                    break;
                }

                if (flush.IsCompleted)
                {
                    // The application stopped reading (it is closing the connection): keep draining until the peer
                    // closes, so our last bytes are not reset away.
                    while (await socket.ReceiveAsync(DrainBuffer, SocketFlags.None).ConfigureAwait(false) != 0)
                    {
                    }

                    break;
                }
            }
        }
        catch (Exception ex) when (ex is SocketException or ObjectDisposedException)
        {
            // Reset by the peer or aborted by us: either way the application just sees the end of its input.
        }
        finally
        {
            if (!parked)
            {
                await writer.CompleteAsync().ConfigureAwait(false);
                receiveEnded.Set();
            }
        }
    }

    /// <summary>
    /// Sends what the application queued until the output is empty, then leaves a read of the output pipe pending with
    /// <see cref="OnOutput"/> to call when more is flushed, and returns; ends when the application completes its output
    /// or the connection is aborted.
    /// </summary>
    /// <param name="woken">Called back: the pending read has completed and its result is to be taken.</param>
    private async Task SendAsync(bool woken)
    {
        var reader = output.Reader;
        var graceful = false;
        var parked = false;
        try
        {
            while (true)
            {
                ReadResult result;
                if (woken)
                {
                    var read = idleRead;
                    idleRead = default;
                    woken = false;
                    result = read.GetAwaiter().GetResult();
                }
                else
                {
                    var read = reader.ReadAsync();
                    if (!read.IsCompleted)
                    {
                        idleRead = read;
                        parked = true;
                        read.ConfigureAwait(false).GetAwaiter().UnsafeOnCompleted(onOutput ??= OnOutput);
                        return;
                    }

                    result = read.GetAwaiter().GetResult();
                }

                if (result.IsCanceled)
                {
                    break;
                }

                var buffer = result.Buffer;
                if (buffer.Length > MaxSendBytes)
                {
                    // The rest is read again at once: it has not been examined.
                    buffer = buffer.Slice(0, MaxSendBytes);
                }

                if (!buffer.IsEmpty)
                {
                    Volatile.Write(ref sendStartedAt, Math.Max(Environment.TickCount64, 1));

                    // Rented for this send only: an idle connection holds none. A send that failed is not returned.
                    var sender = SocketSenderPool.Rent();
                    try
                    {
                        await sender.SendAsync(socket, buffer).ConfigureAwait(false);
                    }
                    catch
                    {
                        sender.Dispose();
                        throw;
                    }

                    SocketSenderPool.Return(sender);
                    Volatile.Write(ref sendStartedAt, 0);
                    output.MarkSent(buffer.Length);
                }

                reader.AdvanceTo(buffer.End);
                if (result.IsCompleted && buffer.End.Equals(result.Buffer.End))
                {
                    graceful = Volatile.Read(ref aborted) == 0;
                    break;
                }
            }

            if (graceful)
            {
                // Everything the application wrote has been sent: send FIN, then give the peer a moment to close.
                socket.Shutdown(SocketShutdown.Send);
                await Task.WhenAny(receiveEnded.WaitAsync(), Task.Delay(LingerTimeout)).ConfigureAwait(false);
            }
        }
        catch (Exception ex) when (ex is SocketException or ObjectDisposedException)
        {
        }
        finally
        {
            if (!parked)
            {
                await reader.CompleteAsync().ConfigureAwait(false);
                Abort(closeReason ?? "closed");
                sendEnded.Set();
            }
        }
    }

    /// <summary>
    /// That a loop has ended, waited for only when a connection closes: a task is made only if someone waits before
    /// the loop ends, so a running connection holds none.
    /// </summary>
    private struct EndSignal
    {
        private static readonly object Done = new();

        // Null (running, nobody waits), Done, or the waiter's TaskCompletionSource.
        private object? state;

        public void Set()
        {
            var prior = Interlocked.Exchange(ref state, Done);
            (prior as TaskCompletionSource)?.TrySetResult();
        }

        public Task WaitAsync()
        {
            var current = Volatile.Read(ref state);
            if (current is null)
            {
                var waiter = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
                current = Interlocked.CompareExchange(ref state, waiter, null) ?? waiter;
            }

            return current == Done ? Task.CompletedTask : ((TaskCompletionSource)current).Task;
        }
    }
}
