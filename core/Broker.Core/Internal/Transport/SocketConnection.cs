using System.Buffers;
using System.IO.Pipelines;
using System.Net;
using System.Net.Sockets;
using Broker.Abstractions;

namespace Broker.Core.Internal.Transport;

/// <summary>
/// A TCP connection as a pair of pipes: a receive loop fills the input pipe and a send loop drains the output pipe.
/// The output is an <see cref="OutputBuffer"/>: it reports backpressure from three quarters of max_pending on and
/// counts what waits to be sent, which the broker reads to detect slow consumers. The connection is its own
/// <see cref="IDuplexPipe"/> (the initial <see cref="Transport"/>): a separate pair object cost every connection 32 B
/// (issue 25). The input is taken with its first read: a pipe filled by a receive loop, or, when the protocol asked
/// for it first (<see cref="IOnDemandTransport"/>), a <see cref="SocketInputReader"/> that holds nothing while idle;
/// the output likewise with its first write (the <see cref="OutputBuffer"/> and its send loop, or a
/// <see cref="SocketOutputWriter"/>). The connection is its own <see cref="IPendingOutputFeature"/>, whichever it is.
/// </summary>
internal sealed partial class SocketConnection : TransportConnection, IDuplexPipe, IOnDemandTransport, IPendingOutputFeature
{
    // The parser runs inline on the receiving thread: no hop between the stream and the protocol. One instance for
    // every connection (the options are the same; issue 25).
    private static readonly PipeOptions InputOptions = new(
        readerScheduler: PipeScheduler.Inline,
        writerScheduler: PipeScheduler.Inline,
        pauseWriterThreshold: 1024 * 1024,
        resumeWriterThreshold: 512 * 1024,
        minimumSegmentSize: ReceiveSizing.MinSize,
        useSynchronizationContext: false);

    // The socket's own receive loop's input: the parser runs on the receiving thread for a small read, on a worker for
    // a large one when the receiving thread is the socket engine's (InputReaderScheduler).
    private static readonly PipeOptions ReceiveOptions = new(
        readerScheduler: InputReaderScheduler.Instance,
        writerScheduler: PipeScheduler.Inline,
        pauseWriterThreshold: 1024 * 1024,
        resumeWriterThreshold: 512 * 1024,
        minimumSegmentSize: ReceiveSizing.MinSize,
        useSynchronizationContext: false);

    // The accepted socket, let go once both on-demand sides go through its epoll side (SocketConnection.Released.cs).
    private Socket? socket;
    // The input pipe (with its receive loop) or the on-demand reader, whichever was taken first; null until then.
    private object? inputSide;
    // The output buffer (with its send loop) or the on-demand writer, whichever was taken first; null until then.
    private object? outputSide;
    private readonly PipeScheduler outputReaderScheduler;

    // The connection's one-way switches in one int (one each cost an idle NATS connection 16 B more; issue 25).
    private int flags;
    private const int Started = 1;
    private const int ReceiveLoopStarted = 2;
    private const int SendLoopStarted = 4;
    private const int Signalled = 8;
    private const int Aborted = 16;
    private const int Counted = 32;
    // Our side sent FIN (Shutdown(Send)): a close after it is graceful even with a receive pending.
    private const int ShutDownSend = 64;

    // Made when ConnectionClosed is first asked for: the broker's own handlers never ask, so most connections hold
    // none (issue 25). Signalled is set once the connection closed; a token asked for after that is cancelled already.
    private CancellationTokenSource? closed;
    private readonly SocketListener? owner;
    private Task receiveTask = Task.CompletedTask;
    private Task sendTask = Task.CompletedTask;
    private string? closeReason;

    /// <summary>Environment.TickCount64 when the send in progress began, or 0 when no send is in progress.</summary>
    private long sendStartedAt;

    public SocketConnection(Socket socket, TransportSettings settings, SocketListener? owner, PipeScheduler outputReaderScheduler)
    {
        this.socket = socket;
        this.owner = owner;
        Settings = settings;
        id = Interlocked.Increment(ref nextId);
        remoteEndPoint = socket.RemoteEndPoint;

        this.outputReaderScheduler = outputReaderScheduler;
        Transport = this;
        Features.Set<IPendingOutputFeature>(this);
        BurstReclaimer.Shared.Opened();
        // Counted while the connection counts as open for BurstReclaimer; taken back once, when disposed.
        flags = Counted;
    }

    private static long nextId;

    // The number in ConnectionId, whose text is made when asked for (a log line's fallback when there is no remote end
    // point): an idle connection keeps no string for it (issue 25).
    private readonly long id;

    /// <summary>
    /// A stream connection's input (a leaf link over TLS or WebSocket): the parser runs inline on the receiving thread
    /// (no hop between the stream and the protocol), and the receive loop pauses from 1 MiB unread.
    /// </summary>
    internal static Pipe CreateInputPipe() => new(InputOptions);

    // This connection's input, filled by its receive loop (ReceiveLoopAsync decides where each read is parsed).
    private static Pipe CreateReceivePipe() => new(ReceiveOptions);

    public override string ConnectionId => "tcp-" + id.ToString(System.Globalization.CultureInfo.InvariantCulture);

    public override IDuplexPipe Transport { get; set; }

    PipeReader IDuplexPipe.Input
    {
        get
        {
            var side = Volatile.Read(ref inputSide) ?? TakeInput(CreateReceivePipe());
            return side is SocketInputReader reader ? reader : ((Pipe)side).Reader;
        }
    }

    public bool UseOnDemandInput()
    {
        var taken = (Volatile.Read(ref inputSide) ?? TakeInput(new SocketInputReader(socket!, EpollSide ?? EpollSocket.TryCreate(socket!)))) is SocketInputReader;
        ReleaseSocket();
        return taken;
    }

    // The on-demand sides' epoll socket (one per connection, made with the first of them; null on the runtime's path).
    // Found through the sides rather than kept in a field: a NATS connection, which takes neither, stays 8 B smaller.
    private EpollSocket? EpollSide
        => (Volatile.Read(ref inputSide) as SocketInputReader)?.Epoll ?? (Volatile.Read(ref outputSide) as SocketOutputWriter)?.Epoll;

    // The first side taken stays; the input pipe's receive loop starts with it once the connection has started.
    private object TakeInput(object made)
    {
        var taken = Interlocked.CompareExchange(ref inputSide, made, null);
        if (taken is not null)
        {
            return taken;
        }

        if (made is Pipe && Has(Started))
        {
            StartReceiveLoop();
        }

        return made;
    }

    private void StartReceiveLoop()
    {
        if (Set(ReceiveLoopStarted))
        {
            receiveTask = ReceiveLoopAsync();
        }
    }

    PipeWriter IDuplexPipe.Output
    {
        get
        {
            var side = Volatile.Read(ref outputSide) ?? TakeOutput(new OutputBuffer(Settings, below: null, outputReaderScheduler));
            return side is SocketOutputWriter writer ? writer : ((OutputBuffer)side).Writer;
        }
    }

    public bool UseOnDemandOutput()
    {
        var taken = (Volatile.Read(ref outputSide)
            ?? TakeOutput(new SocketOutputWriter(this, OutputPipePool.For(Settings, outputReaderScheduler), EpollSide ?? EpollSocket.TryCreate(socket!))))
            is SocketOutputWriter;
        ReleaseSocket();
        return taken;
    }

    /// <summary>Bytes written and not yet handed to the socket.</summary>
    public long PendingOutputBytes => Volatile.Read(ref outputSide) switch
    {
        OutputBuffer buffer => buffer.PendingOutputBytes,
        SocketOutputWriter writer => writer.PendingOutputBytes,
        _ => 0,
    };

    /// <summary>The output buffer's wait for its bytes to drain; an on-demand output cannot tell (it holds nothing between sends).</summary>
    public Task? WhenPendingAtMost(long bytes) => Volatile.Read(ref outputSide) is OutputBuffer buffer ? ((IPendingOutputFeature)buffer).WhenPendingAtMost(bytes) : null;

    // The first side taken stays; the output buffer's send loop starts with it once the connection has started.
    private object TakeOutput(object made)
    {
        var taken = Interlocked.CompareExchange(ref outputSide, made, null);
        if (taken is not null)
        {
            return taken;
        }

        if (made is OutputBuffer && Has(Started))
        {
            StartSendLoop();
        }

        return made;
    }

    private void StartSendLoop()
    {
        if (Set(SendLoopStarted))
        {
            sendTask = SendLoopAsync();
        }
    }

    /// <summary>
    /// The local endpoint, read from the socket when first asked (an INFO on a non-client listener, /connz): most
    /// connections never ask, and reading it costs an endpoint and its address (issue 25). Null once the socket is closed.
    /// </summary>
    public override EndPoint? LocalEndPoint
    {
        get
        {
            if (localEndPoint is null)
            {
                try
                {
                    localEndPoint = RuntimeSocket()?.LocalEndPoint;
                }
                catch (Exception ex) when (ex is ObjectDisposedException or SocketException)
                {
                }
            }

            return localEndPoint;
        }
    }

    private EndPoint? localEndPoint;

    private EndPoint? remoteEndPoint;

    /// <summary>The peer's end point; once the accepted socket was let go, an IPv4 one is made from its compact form when asked.</summary>
    public override EndPoint? RemoteEndPoint => Volatile.Read(ref remoteEndPoint) ?? PeerEndPoint();

    public override TransportSettings Settings { get; }

    public override CancellationToken ConnectionClosed
    {
        get
        {
            if (Has(Signalled))
            {
                return new CancellationToken(canceled: true);
            }

            var source = Volatile.Read(ref closed);
            if (source is null)
            {
                var made = new CancellationTokenSource();
                source = Interlocked.CompareExchange(ref closed, made, null) ?? made;

                // Closed while it was being made: SignalClosed may not have seen it.
                if (Has(Signalled))
                {
                    source.Cancel();
                }
            }

            return source.Token;
        }
    }

    public override string? CloseReason => closeReason;

    /// <summary>When the current send began (Environment.TickCount64), or 0.</summary>
    public long SendStartedAt => Volatile.Read(ref sendStartedAt);

    /// <summary>
    /// Bytes read from the socket before this connection took it over (a leaf link's first INFO, read to decide on
    /// TLS): the input's first bytes. Call before <see cref="Start"/>.
    /// </summary>
    public void Preload(ReadOnlySpan<byte> bytes)
    {
        var input = (Pipe)(Volatile.Read(ref inputSide) ?? TakeInput(CreateReceivePipe()));
        input.Writer.Write(bytes);
        input.Writer.FlushAsync().AsTask().GetAwaiter().GetResult();
    }

    /// <summary>
    /// Starts the send and receive loops of the pipes taken already (<see cref="Preload"/>); the others start
    /// with the first use of the input or the output.
    /// </summary>
    public void Start()
    {
        Set(Started);
        if (Volatile.Read(ref outputSide) is OutputBuffer)
        {
            StartSendLoop();
        }

        if (Volatile.Read(ref inputSide) is Pipe)
        {
            StartReceiveLoop();
        }
    }

    public override void Abort(string reason)
    {
        if (!Set(Aborted))
        {
            return;
        }

        closeReason ??= reason;
        var epoll = EpollSide;
        try
        {
            var runtime = RuntimeSocket();
            if (runtime is not null && epoll is { IsReceiving: true } && !Has(ShutDownSend))
            {
                // As the runtime's close does when it cancels a pending receive: an abort resets the connection.
                runtime.LingerState = new LingerOption(true, 0);
            }

            runtime?.Dispose();
        }
        catch (Exception ex) when (ex is ObjectDisposedException or SocketException)
        {
        }

        epoll?.Close();

        // Let both loops observe the abort even if the application never touches the pipes again.
        // An on-demand input's pending receive ends with the socket.
        (Volatile.Read(ref inputSide) as Pipe)?.Writer.CancelPendingFlush();
        switch (Volatile.Read(ref outputSide))
        {
            case OutputBuffer output:
                output.Reader.CancelPendingRead();
                break;
            case SocketOutputWriter writer:
                writer.CancelSending();
                break;
        }

        SignalClosed();
    }

    public override async ValueTask DisposeAsync()
    {
        try
        {
            // The send loop ends once the application completes its output (after the last bytes are sent).
            var sending = sendTask;
            switch (Volatile.Read(ref outputSide))
            {
                case OutputBuffer output:
                    output.Writer.Complete();
                    sending = sendTask;
                    break;
                case SocketOutputWriter writer:
                    writer.Complete();
                    sending = writer.WhenEnded();
                    break;
            }

            await Task.WhenAll(receiveTask, sending).ConfigureAwait(false);
        }
        finally
        {
            owner?.Remove(this);
            if ((Interlocked.And(ref flags, ~Counted) & Counted) != 0)
            {
                BurstReclaimer.Shared.Closed(PendingOutputBytes);
            }
            RuntimeSocket()?.Dispose();
            EpollSide?.Close();
            SignalClosed();
        }
    }

    private bool Has(int flag) => (Volatile.Read(ref flags) & flag) != 0;

    // Sets the flag; true when this call set it.
    private bool Set(int flag) => (Interlocked.Or(ref flags, flag) & flag) == 0;

    // The token source is not disposed: it has no timer, and its registrations are gone once it is cancelled.
    private void SignalClosed()
    {
        Set(Signalled);
        Volatile.Read(ref closed)?.Cancel();
    }

    /// <summary>An input and an output as a connection's transport.</summary>
    internal sealed class DuplexPipe(PipeReader input, PipeWriter output) : IDuplexPipe
    {
        public PipeReader Input { get; } = input;

        public PipeWriter Output { get; } = output;
    }
}
