using System.Buffers;
using System.IO.Pipelines;
using System.Net.Sockets;
using System.Runtime.CompilerServices;
using System.Threading.Tasks.Sources;
using Broker.Abstractions;

namespace Broker.Core.Internal.Transport;

/// <summary>
/// A connection's input read on demand (<see cref="Broker.Abstractions.IOnDemandTransport"/>): the socket is read only while
/// the application's <see cref="ReadAsync"/> waits, into one array rented for as long as it holds unread bytes. An idle
/// connection holds no pipe, no receive loop and no buffer: its read waits with a zero-byte receive, the reader itself
/// being the awaited source (no state machine per wait); a loop that parks (<see cref="IParkingReader"/>) holds none of
/// its own either. Issue 25.
/// </summary>
/// <remarks>
/// The unread bytes are one array (<see cref="ReceiveArray"/>, a single-segment sequence), which goes back to the pool
/// once everything read was consumed and no receive is in flight. Once the application completes the
/// reader, input is drained until the peer closes (closing a socket with unread input sends RST, which could destroy
/// our last bytes before the peer reads them); <see cref="WhenDrained"/> is what the send loop lingers on.
/// State is changed under the reader's own monitor: the receive's completion, <see cref="CancelPendingRead"/> and a
/// token's cancellation come from other threads than the application's. The monitor is the object's own (a
/// <see cref="Lock"/> would be an object more per connection); nothing outside this class locks on it.
/// </remarks>
internal sealed partial class SocketInputReader : PipeReader, IValueTaskSource<ReadResult>, IParkingReader
{
    // The flags a wake passes to GetResult.
    private const byte Canceled = 1;
    private const byte Ended = 2;

    // The EpollSocket read through the process's epoll set (Linux; issue 25), or the runtime's Socket: one field for
    // either (8 B less per idle connection).
    private readonly object source;
    private ReceiveArray unread;
    private ReceiveSizing sizing;

    // The last AdvanceTo examined everything: the next read waits for more bytes.
    private bool examinedAll;
    private bool receiving;
    private bool zeroByteReceive;
    // Set by a zero-byte receive that completed: the next receive takes an array.
    private bool zeroByteDone;
    private bool waiting;
    private bool cancelRequested;
    private bool ended;
    private bool completed;

    // The wake's flags only (Canceled, Ended): GetResult rebuilds the ReadResult from what is unread, which nothing but a
    // cancelled wait's receive changes between the wake and GetResult. A ReadResult in the core was 24 B more per
    // connection (issue 25).
    private ManualResetValueTaskSourceCore<byte> core;

    public SocketInputReader(Socket socket, EpollSocket? epoll = null) => source = (object?)epoll ?? socket;

    /// <summary>The socket's epoll side when input is read through it, else null.</summary>
    internal EpollSocket? Epoll => source as EpollSocket;

    /// <summary>Whether the reader holds a receive array now (tests read it: an idle connection holds none).</summary>
    internal bool HoldsBuffer
    {
        get
        {
            lock (this)
            {
                return unread.IsHeld;
            }
        }
    }

    public override bool TryRead(out ReadResult result)
    {
        lock (this)
        {
            ThrowIfCompleted();
            return TryTake(out result);
        }
    }

    public override ValueTask<ReadResult> ReadAsync(CancellationToken cancellationToken = default)
    {
        cancellationToken.ThrowIfCancellationRequested();
        return StartRead(cancellationToken, out var result, out var version) ? new ValueTask<ReadResult>(result) : new ValueTask<ReadResult>(this, version);
    }

    /// <inheritdoc/>
    public bool TryReadOrPark(out ReadResult result, Action<object?> wake, object? state)
    {
        if (StartRead(CancellationToken.None, out result, out var version))
        {
            return true;
        }

        // As an await with ConfigureAwait(false) registers: a wake that came first queues the callback.
        core.OnCompleted(wake, state, version, ValueTaskSourceOnCompletedFlags.None);
        return false;
    }

    /// <inheritdoc/>
    public ReadResult TakeParkedResult() => ((IValueTaskSource<ReadResult>)this).GetResult(core.Version);

    // A result now (true), or a wait begun on the core at version.
    private bool StartRead(CancellationToken cancellationToken, out ReadResult result, out short version)
    {
        version = 0;
        lock (this)
        {
            ThrowIfCompleted();
            if (waiting)
            {
                throw new InvalidOperationException("A read is already pending.");
            }

            if (TryTake(out result))
            {
                return true;
            }

            if (!receiving)
            {
                Pump();
            }

            if (TryTake(out result))
            {
                return true;
            }

            core.Reset();
            waiting = true;
            if (cancellationToken.CanBeCanceled)
            {
                Extra().TokenRegistration = cancellationToken.UnsafeRegister(static state => ((SocketInputReader)state!).CancelWait(true), this);
            }

            version = core.Version;
            return false;
        }
    }

    public override void AdvanceTo(SequencePosition consumed) => AdvanceTo(consumed, consumed);

    public override void AdvanceTo(SequencePosition consumed, SequencePosition examined)
    {
        lock (this)
        {
            examinedAll = unread.Advance(consumed, examined);
            if (unread.IsEmpty && !receiving)
            {
                unread.Return();
            }
        }
    }

    public override void Complete(Exception? exception = null)
    {
        bool drain;
        lock (this)
        {
            if (completed)
            {
                return;
            }

            completed = true;
            drain = !receiving && !ended;
            if (!receiving)
            {
                unread.Return();
            }
        }

        if (drain)
        {
            _ = DrainAsync();
        }
    }

    ReadResult IValueTaskSource<ReadResult>.GetResult(short token)
    {
        var flags = core.GetResult(token);
        if ((flags & Canceled) == 0)
        {
            // Woken by a receive: none is in flight and the application's read is the only one, so nothing changes
            // what is unread before this call.
            return new ReadResult(unread.Unread, isCanceled: false, isCompleted: (flags & Ended) != 0);
        }

        // Woken by CancelPendingRead: a receive may still be in flight and add what it brought.
        lock (this)
        {
            return new ReadResult(unread.Unread, isCanceled: true, isCompleted: (flags & Ended) != 0);
        }
    }

    ValueTaskSourceStatus IValueTaskSource<ReadResult>.GetStatus(short token) => core.GetStatus(token);

    void IValueTaskSource<ReadResult>.OnCompleted(Action<object?> continuation, object? state, short token, ValueTaskSourceOnCompletedFlags flags)
        => core.OnCompleted(continuation, state, token, flags);

    private void ThrowIfCompleted()
    {
        if (completed)
        {
            throw new InvalidOperationException("Reading is not allowed after the reader was completed.");
        }
    }

    // Under the monitor: a result when there is something to return (unexamined bytes, the end, a cancellation).
    private bool TryTake(out ReadResult result)
    {
        var bytes = unread.Unread;
        if (cancelRequested)
        {
            cancelRequested = false;
            result = new ReadResult(bytes, isCanceled: true, isCompleted: ended);
            return true;
        }

        if (ended || (!unread.IsEmpty && !examinedAll))
        {
            result = new ReadResult(bytes, isCanceled: false, isCompleted: ended);
            return true;
        }

        result = default;
        return false;
    }

    // Under the monitor, no receive in flight: receives until bytes came, the input ended or a receive is pending.
    private void Pump()
    {
        while (!ended)
        {
            ValueTask<int> receive;
            // A zero-byte receive first waits for data without holding an array; a busy connection skips it
            // (ReceiveSizing), as does one that holds unread bytes already.
            zeroByteReceive = !unread.IsHeld && sizing.WaitFirst && !zeroByteDone;
            try
            {
                if (zeroByteReceive)
                {
                    receive = Receive(Memory<byte>.Empty, sizing.PastSetup);
                }
                else
                {
                    unread.EnsureSpace(sizing.Size);
                    receive = Receive(unread.Free, sizing.PastSetup);
                }
            }
            catch (Exception ex) when (ex is SocketException or ObjectDisposedException)
            {
                ended = true;
                return;
            }

            if (!receive.IsCompleted)
            {
                receiving = true;
                if (source is EpollSocket epoll)
                {
                    // The socket is the receive's source: it calls back with this reader as the state, so no
                    // delegate per reader is made (64 B per idle connection), and its pending receive is found there
                    // (PendingReceive), not kept here (16 B; issue 25).
                    epoll.OnReceiveCompleted(static state => ((SocketInputReader)state!).OnReceived(), this);
                }
                else
                {
                    AwaitRuntimeReceive(receive);
                }

                return;
            }

            if (Received(receive.ConfigureAwait(false).GetAwaiter()))
            {
                return;
            }
        }
    }

    // Under the monitor: takes a receive's outcome; true when there is something new for the reader.
    private bool Received(ConfiguredValueTaskAwaitable<int>.ConfiguredValueTaskAwaiter receive)
    {
        int received;
        try
        {
            received = receive.GetResult();
        }
        catch (Exception ex) when (ex is SocketException or ObjectDisposedException)
        {
            ended = true;
            return true;
        }

        if (zeroByteReceive)
        {
            zeroByteReceive = false;
            zeroByteDone = true;
            return false;
        }

        zeroByteDone = false;
        if (received == 0)
        {
            ended = true;
            return true;
        }

        sizing.Record(received, unread.Free.Length);
        unread.Received(received);
        examinedAll = false;
        return true;
    }

    private void OnReceived()
    {
        ReadResult result = default;
        var wake = false;
        var drain = false;
        TaskCompletionSource? closed = null;
        lock (this)
        {
            receiving = false;
            var news = Received(TakePending());
            if (completed)
            {
                // Completed while the receive was in flight: what came is dropped, the rest is drained.
                unread.Return();
                drain = !ended;
            }
            else if (waiting)
            {
                if (!news)
                {
                    Pump();
                }

                wake = !receiving && TryTake(out result);
                waiting = !wake;
            }
            else if (unread.IsEmpty)
            {
                // A cancelled read left nobody waiting and nothing came: give the array back.
                unread.Return();
            }

            if (ended)
            {
                closed = rare?.Drained;
            }
        }

        Finish(wake, result);
        closed?.TrySetResult();
        if (drain)
        {
            _ = DrainAsync();
        }
    }

    // Outside the monitor: the application's continuation runs inline (as the input pipe's inline reader scheduler).
    private void Finish(bool wake, ReadResult result)
    {
        if (wake)
        {
            if (rare is { } extra)
            {
                extra.TokenRegistration.Unregister();
                extra.TokenRegistration = default;
            }

            core.SetResult((byte)((result.IsCanceled ? Canceled : 0) | (result.IsCompleted ? Ended : 0)));
        }
    }
}
