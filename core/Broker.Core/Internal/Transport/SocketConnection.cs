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
/// (issue 25).
/// </summary>
internal sealed partial class SocketConnection : TransportConnection, IDuplexPipe
{
    // The parser runs inline on the receiving thread: no hop between the socket and the protocol. One instance for
    // every connection (the options are the same; issue 25).
    private static readonly PipeOptions InputOptions = new(
        readerScheduler: PipeScheduler.Inline,
        writerScheduler: PipeScheduler.Inline,
        pauseWriterThreshold: 1024 * 1024,
        resumeWriterThreshold: 512 * 1024,
        minimumSegmentSize: ReceiveSizing.MinSize,
        useSynchronizationContext: false);

    private readonly Socket socket;
    private readonly Pipe input;
    private readonly OutputBuffer output;
    // Made when ConnectionClosed is first asked for: the broker's own handlers never ask, so most connections hold
    // none (issue 25). signalled is 1 once the connection closed; a token asked for after that is cancelled already.
    private CancellationTokenSource? closed;
    private int signalled;
    private readonly SocketListener? owner;
    private Task receiveTask = Task.CompletedTask;
    private Task sendTask = Task.CompletedTask;
    private string? closeReason;
    private int aborted;

    // 1 while the connection counts as open for BurstReclaimer; taken back once, when disposed.
    private int counted;

    /// <summary>Environment.TickCount64 when the send in progress began, or 0 when no send is in progress.</summary>
    private long sendStartedAt;

    public SocketConnection(Socket socket, TransportSettings settings, SocketListener? owner, PipeScheduler outputReaderScheduler)
    {
        this.socket = socket;
        this.owner = owner;
        Settings = settings;
        id = Interlocked.Increment(ref nextId);
        RemoteEndPoint = socket.RemoteEndPoint;

        input = CreateInputPipe();
        output = new OutputBuffer(settings, below: null, outputReaderScheduler);
        Transport = this;
        Features.Set<IPendingOutputFeature>(output);
        BurstReclaimer.Shared.Opened();
        counted = 1;
    }

    private static long nextId;

    // The number in ConnectionId, whose text is made when asked for (a log line's fallback when there is no remote end
    // point): an idle connection keeps no string for it (issue 25).
    private readonly long id;

    /// <summary>
    /// A connection's input: the parser runs inline on the receiving thread (no hop between the network and the
    /// protocol), and the receive loop pauses from 1 MiB unread.
    /// </summary>
    internal static Pipe CreateInputPipe() => new(InputOptions);

    public override string ConnectionId => "tcp-" + id.ToString(System.Globalization.CultureInfo.InvariantCulture);

    public override IDuplexPipe Transport { get; set; }

    PipeReader IDuplexPipe.Input => input.Reader;

    PipeWriter IDuplexPipe.Output => output.Writer;

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
                    localEndPoint = socket.LocalEndPoint;
                }
                catch (Exception ex) when (ex is ObjectDisposedException or SocketException)
                {
                }
            }

            return localEndPoint;
        }
    }

    private EndPoint? localEndPoint;

    public override EndPoint? RemoteEndPoint { get; }

    public override TransportSettings Settings { get; }

    public override CancellationToken ConnectionClosed
    {
        get
        {
            if (Volatile.Read(ref signalled) != 0)
            {
                return new CancellationToken(canceled: true);
            }

            var source = Volatile.Read(ref closed);
            if (source is null)
            {
                var made = new CancellationTokenSource();
                source = Interlocked.CompareExchange(ref closed, made, null) ?? made;

                // Closed while it was being made: SignalClosed may not have seen it.
                if (Volatile.Read(ref signalled) != 0)
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
        input.Writer.Write(bytes);
        input.Writer.FlushAsync().AsTask().GetAwaiter().GetResult();
    }

    public void Start()
    {
        receiveTask = ReceiveLoopAsync();
        sendTask = SendLoopAsync();
    }

    public override void Abort(string reason)
    {
        if (Interlocked.Exchange(ref aborted, 1) != 0)
        {
            return;
        }

        closeReason ??= reason;
        try
        {
            socket.Dispose();
        }
        catch (ObjectDisposedException)
        {
        }

        // Let both loops observe the abort even if the application never touches the pipes again.
        input.Writer.CancelPendingFlush();
        output.Reader.CancelPendingRead();
        SignalClosed();
    }

    public override async ValueTask DisposeAsync()
    {
        try
        {
            // The send loop ends once the application completes its output (after the last bytes are sent).
            output.Writer.Complete();
            await Task.WhenAll(receiveTask, sendTask).ConfigureAwait(false);
        }
        finally
        {
            owner?.Remove(this);
            if (Interlocked.Exchange(ref counted, 0) == 1)
            {
                BurstReclaimer.Shared.Closed(output.PendingOutputBytes);
            }
            socket.Dispose();
            SignalClosed();
        }
    }

    // The token source is not disposed: it has no timer, and its registrations are gone once it is cancelled.
    private void SignalClosed()
    {
        Volatile.Write(ref signalled, 1);
        Volatile.Read(ref closed)?.Cancel();
    }

    /// <summary>An input and an output as a connection's transport.</summary>
    internal sealed class DuplexPipe(PipeReader input, PipeWriter output) : IDuplexPipe
    {
        public PipeReader Input { get; } = input;

        public PipeWriter Output { get; } = output;
    }
}
