using System.Buffers;
using System.Net.Sockets;
using System.Runtime.InteropServices;
using System.Threading.Tasks.Sources;

namespace Broker.Core.Internal.Transport;

/// <summary>
/// An on-demand connection's socket read and written with non-blocking syscalls on its own descriptor, readiness coming
/// from <see cref="EpollEngine"/> (issue 25): the runtime's per-socket asynchronous state (about 1.1 KB) is never made.
/// The descriptor's <see cref="SafeSocketHandle"/> is kept here; the accepted <see cref="Socket"/> is let go once both
/// sides read and write here, and what is rare (options, shutdown, close) goes through a view made for the call
/// (<c>SocketConnection.Released.cs</c>). Each syscall holds a reference on the handle, so a close cannot race a reused
/// descriptor.
/// </summary>
/// <remarks>
/// Registered <c>EPOLLONESHOT</c>: a wait arms the events it wants (<c>EPOLLIN</c> for a receive, <c>EPOLLOUT</c> for a
/// send the kernel did not take whole), an event disarms the registration, and what is still wanted is armed again. The
/// engine's thread records which waits fired and queues this object to the thread pool (one work item however many
/// fired); there the receive is made and its <see cref="ValueTask{TResult}"/> completed, so the reader's continuation
/// (and the application's parse) runs on a pool thread, inline, as it did after the runtime's receive. A receive whose
/// reader asked for it (<c>here</c>: a connection past its set-up reads) is instead made on the engine's thread and its
/// continuation runs there: one read loop that receives and parses in turn gains nothing from a worker (there is no
/// receive to overlap with its parse), and the hand-off cost a pool wake-up and the idle workers' spinning
/// (<c>sched_yield</c>) per readiness (docs/benchmarks.md "ws3"). So that a connection that streams without a pause
/// cannot keep the engine's thread from the others, a readiness handled there receives at most about
/// <see cref="BytesPerDispatch"/>; the next receive is made on a worker, where the stream then continues as it did
/// before (its receives find bytes at once) until one has to wait, which arms the set for the engine's thread again. The object is the receive's awaited source; the send's wait is a small object
/// made the first time a send had to wait. State changes happen under this object's own monitor (nothing outside locks
/// on it).
/// </remarks>
internal sealed class EpollSocket : IValueTaskSource<int>, IThreadPoolWorkItem
{
    /// <summary>
    /// How many bytes a readiness handled on the engine's thread receives there (its own receive and the reader's next
    /// ones that find bytes at once) before the next receive waits for the set again: 256 KiB, four of a streaming
    /// publisher's largest reads (<see cref="ReceiveSizing.MaxSize"/>), parsed before the other sockets' turn.
    /// </summary>
    internal const int BytesPerDispatch = 256 * 1024;

    // On the engine's thread, while a readiness is handled there: its socket, and the bytes received for it so far.
    [ThreadStatic]
    private static EpollSocket? dispatching;
    [ThreadStatic]
    private static int receivedHere;

    private readonly EpollEngine engine;
    private readonly SafeSocketHandle handle;
    private readonly int fd;

    // Events armed (wanted) in the kernel now; the registration exists once registered is set.
    private int wanted;
    private bool registered;
    private bool receiving;
    // The pending receive may be made, and its continuation run, on the engine's thread.
    private bool receiveHere;
    private bool closed;
    // Events delivered and not yet handled by Execute (the engine's thread sets them; Execute takes them).
    private int ready;

    private Memory<byte> receiveInto;
    private ManualResetValueTaskSourceCore<int> receive;
    private WritableWait? writable;

    /// <summary>The peer's IPv4 address and port once the connection let its runtime socket go (0 until then).</summary>
    internal long Peer;

    private EpollSocket(EpollEngine engine, SafeSocketHandle handle)
    {
        this.engine = engine;
        this.handle = handle;
        fd = (int)handle.DangerousGetHandle();
        Key = engine.NextKey();
    }

    /// <summary>Tells this registration from an earlier one under the same descriptor number.</summary>
    public int Key { get; }

    /// <summary>The descriptor's handle (its owner once the accepted socket was let go).</summary>
    internal SafeSocketHandle Handle => handle;

    /// <summary>The receive <see cref="ReceiveAsync"/> left pending, to take its result once it completed.</summary>
    internal ValueTask<int> PendingReceive => new(this, receive.Version);

    /// <summary>Whether a receive waits for input now (a close then resets, as the runtime's pending receive did).</summary>
    public bool IsReceiving
    {
        get
        {
            lock (this)
            {
                return receiving;
            }
        }
    }

    /// <summary>The socket's epoll side, or null when on-demand connections use the runtime's sockets.</summary>
    public static EpollSocket? TryCreate(Socket socket)
        => EpollEngine.Shared is { } engine ? new EpollSocket(engine, socket.SafeHandle) : null;

    /// <summary>
    /// Receives into <paramref name="buffer"/>: at once when bytes are there, else once the socket is readable. An empty
    /// buffer waits for readability only (no buffer held) and completes with 0. Fails with a
    /// <see cref="SocketException"/> (reset) or <see cref="ObjectDisposedException"/> (closed by us).
    /// </summary>
    /// <param name="buffer">Where to receive; empty to wait for readability only.</param>
    /// <param name="here">
    /// When the receive has to wait: make it and run its continuation on the engine's thread, not a worker (default
    /// false). Only for a reader whose continuation cannot block that thread for long (past a connection's set-up).
    /// </param>
    public ValueTask<int> ReceiveAsync(Memory<byte> buffer, bool here = false)
    {
        var errno = EpollInterop.EAgain;
        if (ReferenceEquals(dispatching, this) && receivedHere >= BytesPerDispatch)
        {
            // This readiness had its share of the engine's thread: a stream goes on on a worker.
            return ReceiveOnWorker(buffer);
        }
        else
        {
            // An empty buffer peeks at one byte (on the stack): bytes or the end there already complete it at once, as
            // a busy connection's would, without arming the set and a hop through the pool (whose completion could
            // also beat the reader's continuation and make the core queue it, an allocation).
            Span<byte> peek = stackalloc byte[1];
            var received = buffer.IsEmpty ? Receive(peek, out errno, EpollInterop.MsgPeek) : Receive(buffer.Span, out errno);
            if (received >= 0)
            {
                if (ReferenceEquals(dispatching, this))
                {
                    receivedHere += received;
                }

                return new ValueTask<int>(buffer.IsEmpty ? 0 : received);
            }

            if (errno != EpollInterop.EAgain)
            {
                return ValueTask.FromException<int>(Failure(errno));
            }
        }

        int failed;
        lock (this)
        {
            if (closed)
            {
                return ValueTask.FromException<int>(new ObjectDisposedException(nameof(Socket)));
            }

            receiveInto = buffer;
            receiving = true;
            receiveHere = here && engine.ReceivesHere;
            receive.Reset();
            failed = Arm(EpollInterop.EpollIn);
            if (failed != 0)
            {
                receiving = false;
                receiveInto = default;
            }
        }

        return failed == 0 ? new ValueTask<int>(this, receive.Version) : ValueTask.FromException<int>(Failure(failed));
    }

    /// <summary>
    /// Sends the start of <paramref name="buffer"/> without waiting; returns how much the kernel took (less than all when
    /// its send buffer is full: then <see cref="WhenWritable"/>). Throws a <see cref="SocketException"/> when the send fails.
    /// </summary>
    public long TrySend(in ReadOnlySequence<byte> buffer)
    {
        long total = 0;
        foreach (var segment in buffer)
        {
            var span = segment.Span;
            while (!span.IsEmpty)
            {
                var sent = Send(span, out var errno);
                if (sent < 0)
                {
                    if (errno == EpollInterop.EAgain)
                    {
                        return total;
                    }

                    throw Failure(errno);
                }

                total += sent;
                if (sent < span.Length)
                {
                    // The kernel's buffer is full: the rest waits for EPOLLOUT.
                    return total;
                }

                span = span[sent..];
            }
        }

        return total;
    }

    /// <summary>Completes once the socket is writable again (or fails once it is closed).</summary>
    public ValueTask WhenWritable()
    {
        lock (this)
        {
            if (closed)
            {
                return ValueTask.FromException(new ObjectDisposedException(nameof(Socket)));
            }

            var wait = writable ??= new WritableWait();
            wait.Core.Reset();
            wait.Waiting = true;
            var failed = Arm(EpollInterop.EpollOut);
            if (failed != 0)
            {
                wait.Waiting = false;
                return ValueTask.FromException(Failure(failed));
            }

            return new ValueTask(wait, wait.Core.Version);
        }
    }

    /// <summary>
    /// The socket is being closed: waits still pending fail with <see cref="ObjectDisposedException"/> (the descriptor's
    /// close takes it out of the epoll set, which would otherwise leave them waiting for ever).
    /// </summary>
    public void Close()
    {
        bool failReceive;
        WritableWait? failSend;
        lock (this)
        {
            if (closed)
            {
                return;
            }

            closed = true;
            failReceive = receiving;
            receiving = false;
            receiveInto = default;
            failSend = writable is { Waiting: true } ? writable : null;
            if (failSend is not null)
            {
                failSend.Waiting = false;
            }
        }

        engine.Leave(fd, this);
        if (failReceive)
        {
            receive.SetException(new ObjectDisposedException(nameof(Socket)));
        }

        failSend?.Core.SetException(new ObjectDisposedException(nameof(Socket)));
    }

    // On the engine's thread, a readiness's share received: the receive is made, and its continuation run, on a worker.
    private ValueTask<int> ReceiveOnWorker(Memory<byte> buffer)
    {
        lock (this)
        {
            if (closed)
            {
                return ValueTask.FromException<int>(new ObjectDisposedException(nameof(Socket)));
            }

            receiveInto = buffer;
            receiving = true;
            receiveHere = false;
            receive.Reset();
        }

        if (Interlocked.Or(ref ready, EpollInterop.EpollIn) == 0)
        {
            ThreadPool.UnsafeQueueUserWorkItem(this, preferLocal: false);
        }

        return new ValueTask<int>(this, receive.Version);
    }

    /// <summary>
    /// On the engine's thread: records what fired, arms what is still wanted, queues the work (or makes a receive that
    /// asked for it here).
    /// </summary>
    internal void OnEvents(int mask)
    {
        var fired = 0;
        var readHere = false;
        lock (this)
        {
            if (closed)
            {
                return;
            }

            const int failure = EpollInterop.EpollErr | EpollInterop.EpollHup;
            if ((mask & (EpollInterop.EpollIn | failure)) != 0)
            {
                fired |= wanted & EpollInterop.EpollIn;
            }

            if ((mask & (EpollInterop.EpollOut | failure)) != 0)
            {
                fired |= wanted & EpollInterop.EpollOut;
            }

            wanted &= ~fired;
            if (wanted != 0)
            {
                // The one-shot registration is disarmed by any event: arm again what still waits. A failure here is
                // seen by that wait's syscall once it runs.
                Control(EpollInterop.CtlMod, wanted);
            }

            if ((fired & EpollInterop.EpollIn) != 0 && receiveHere)
            {
                // One receive waits for this event (one-shot: no worker can be making it), so it is made here.
                readHere = true;
                fired &= ~EpollInterop.EpollIn;
            }
        }

        if (fired != 0 && Interlocked.Or(ref ready, fired) == 0)
        {
            ThreadPool.UnsafeQueueUserWorkItem(this, preferLocal: false);
        }

        if (readHere)
        {
            dispatching = this;
            receivedHere = 0;
            try
            {
                Readable();
            }
            finally
            {
                dispatching = null;
            }
        }
    }

    void IThreadPoolWorkItem.Execute()
    {
        var events = Interlocked.Exchange(ref ready, 0);
        if ((events & EpollInterop.EpollOut) != 0)
        {
            Writable();
        }

        if ((events & EpollInterop.EpollIn) != 0)
        {
            Readable();
        }
    }

    /// <summary>
    /// Runs <paramref name="continuation"/> with <paramref name="state"/> once the receive <see cref="ReceiveAsync"/> left
    /// pending completes, as awaiting its <see cref="ValueTask{TResult}"/> would (no context captured): the caller's
    /// continuation without a delegate per caller (issue 25). Only for a receive that did not complete at once.
    /// </summary>
    public void OnReceiveCompleted(Action<object?> continuation, object state)
        => receive.OnCompleted(continuation, state, receive.Version, ValueTaskSourceOnCompletedFlags.None);

    int IValueTaskSource<int>.GetResult(short token) => receive.GetResult(token);

    ValueTaskSourceStatus IValueTaskSource<int>.GetStatus(short token) => receive.GetStatus(token);

    void IValueTaskSource<int>.OnCompleted(Action<object?> continuation, object? state, short token, ValueTaskSourceOnCompletedFlags flags)
        => receive.OnCompleted(continuation, state, token, flags);

    // The socket is readable: the waiting receive is made; its continuation (the reader's) runs here, inline.
    private void Readable()
    {
        Memory<byte> into;
        lock (this)
        {
            if (!receiving)
            {
                return;
            }

            into = receiveInto;
        }

        var received = 0;
        var errno = 0;
        if (!into.IsEmpty)
        {
            received = Receive(into.Span, out errno);
            if (received > 0 && ReferenceEquals(dispatching, this))
            {
                receivedHere = received;
            }
        }

        lock (this)
        {
            if (!receiving)
            {
                // Closed meanwhile: Close completed the wait.
                return;
            }

            if (received < 0 && errno == EpollInterop.EAgain)
            {
                // Readable, then not (another reader cannot exist; a spurious wake-up): wait again.
                errno = Arm(EpollInterop.EpollIn);
                if (errno == 0)
                {
                    return;
                }
            }

            receiving = false;
            receiveInto = default;
        }

        if (received >= 0)
        {
            receive.SetResult(received);
        }
        else
        {
            receive.SetException(Failure(errno));
        }
    }

    private void Writable()
    {
        WritableWait? wait;
        lock (this)
        {
            wait = writable is { Waiting: true } ? writable : null;
            if (wait is not null)
            {
                wait.Waiting = false;
            }
        }

        wait?.Core.SetResult(true);
    }

    // Under the monitor: arms (or registers) the wanted events with one more; an errno when epoll_ctl failed.
    private int Arm(int events)
    {
        wanted |= events;
        if (registered)
        {
            return Control(EpollInterop.CtlMod, wanted);
        }

        engine.Enter(fd, this);
        var failed = Control(EpollInterop.CtlAdd, wanted);
        registered = failed == 0;
        return failed;
    }

    // Under the monitor: one epoll_ctl (the descriptor held open meanwhile).
    private int Control(int op, int events)
        => EpollInterop.Control(handle, engine.Descriptor, op, fd, events | EpollInterop.EpollOneShot, (uint)fd | ((ulong)(uint)Key << 32));

    private int Receive(Span<byte> into, out int errno, int flags = 0) => EpollInterop.Receive(handle, fd, into, flags, out errno);

    private int Send(ReadOnlySpan<byte> bytes, out int errno) => EpollInterop.Send(handle, fd, bytes, out errno);

    // EINTR is not expected with MSG_DONTWAIT; a closed handle reads as the runtime's closed socket.
    private static Exception Failure(int errno)
        => errno == EpollInterop.EBadF ? new ObjectDisposedException(nameof(Socket)) : EpollInterop.ToException(errno);

    /// <summary>A send's wait for <c>EPOLLOUT</c>: made the first time a send had to wait, then kept.</summary>
    private sealed class WritableWait : IValueTaskSource
    {
        public ManualResetValueTaskSourceCore<bool> Core;
        public bool Waiting;

        public void GetResult(short token) => Core.GetResult(token);

        public ValueTaskSourceStatus GetStatus(short token) => Core.GetStatus(token);

        public void OnCompleted(Action<object?> continuation, object? state, short token, ValueTaskSourceOnCompletedFlags flags)
            => Core.OnCompleted(continuation, state, token, flags);
    }
}
