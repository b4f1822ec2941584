using System.IO.Pipelines;
using System.Net.Sockets;
using System.Runtime.CompilerServices;

namespace Broker.Core.Internal.Transport;

/// <summary>
/// The reader's parts an idle connection parked on the epoll path never runs: cancellation (<see cref="CancelPendingRead"/>,
/// a read's token), the runtime socket's receives, and the drain after the application completed the reader, with
/// their state in one object made with its first use (<see cref="Rare"/>).
/// </summary>
internal sealed partial class SocketInputReader
{
    // A field of its own only when the reader needs it (24 B less per idle connection; issue 25).
    private Rare? rare;

    public override void CancelPendingRead() => CancelWait(false);

    /// <summary>Completes once the peer closed its side (or the socket failed) after the reader was completed.</summary>
    public Task WhenDrained()
    {
        lock (this)
        {
            if (ended)
            {
                return Task.CompletedTask;
            }

            var extra = Extra();
            extra.Drained ??= new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
            return extra.Drained.Task;
        }
    }

    private void CancelWait(bool byToken)
    {
        ReadResult result = default;
        lock (this)
        {
            if (!waiting)
            {
                if (!byToken)
                {
                    cancelRequested = true;
                }

                return;
            }

            waiting = false;
            if (!byToken)
            {
                TryTake(out result);
                cancelRequested = false;
                result = new ReadResult(result.Buffer, isCanceled: true, isCompleted: result.IsCompleted);
            }
        }

        if (byToken)
        {
            rare!.TokenRegistration = default;
            core.SetException(new OperationCanceledException());
            return;
        }

        Finish(true, result);
    }

    // Under the monitor.
    private Rare Extra() => rare ??= new Rare();

    // here: a receive that waits is made, and the application's continuation run, on the epoll engine's thread (past the
    // connection's set-up reads, whose CONNECT check or handshake could stall every socket of the engine): this reader
    // receives and parses in turn, so a worker would add a hop and its idle spinning, not overlap (docs/benchmarks.md "ws3").
    private ValueTask<int> Receive(Memory<byte> into, bool here = false)
        => source is EpollSocket epoll ? epoll.ReceiveAsync(into, here) : ((Socket)source).ReceiveAsync(into, SocketFlags.None);

    // Under the monitor: the runtime socket's receive is awaited with a delegate kept in Rare, and kept there until taken.
    private void AwaitRuntimeReceive(ValueTask<int> receive)
    {
        var extra = Extra();
        extra.Pending = receive.ConfigureAwait(false).GetAwaiter();
        extra.Pending.UnsafeOnCompleted(extra.OnReceived ??= OnReceived);
    }

    // Under the monitor, once the pending receive completed: its awaiter (the epoll socket's receive, or the runtime's).
    private ConfiguredValueTaskAwaitable<int>.ConfiguredValueTaskAwaiter TakePending()
    {
        if (source is EpollSocket epoll)
        {
            return epoll.PendingReceive.ConfigureAwait(false).GetAwaiter();
        }

        var pending = rare!.Pending;
        rare.Pending = default;
        return pending;
    }

    private async Task DrainAsync()
    {
        try
        {
            while (await Receive(SocketConnection.DrainBuffer).ConfigureAwait(false) != 0)
            {
            }
        }
        catch (Exception ex) when (ex is SocketException or ObjectDisposedException)
        {
        }

        TaskCompletionSource? closed;
        lock (this)
        {
            ended = true;
            closed = rare?.Drained;
        }

        closed?.TrySetResult();
    }

    /// <summary>The reader's state for cancellable reads, the runtime socket's receives and the drain after completion.</summary>
    private sealed class Rare
    {
        public CancellationTokenRegistration TokenRegistration;
        // The runtime socket's receive continuation and its pending receive (the epoll path calls back without a
        // delegate and keeps its receive itself).
        public Action? OnReceived;
        public ConfiguredValueTaskAwaitable<int>.ConfiguredValueTaskAwaiter Pending;
        public TaskCompletionSource? Drained;
    }
}
