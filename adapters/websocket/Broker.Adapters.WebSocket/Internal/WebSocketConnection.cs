using System.IO.Pipelines;
using System.Net;
using Broker.Abstractions;
using Microsoft.Extensions.Logging;

namespace Broker.Adapters.WebSocket.Internal;

/// <summary>
/// An upgraded WebSocket connection as a plain byte pipe for a protocol handler: the receive loop decodes the
/// client's frames (<c>.Receive.cs</c>) into the input pipe, the send loop frames what the protocol writes into
/// binary messages (<c>.Send.cs</c>). Frames need not line up with protocol operations, as in nats-server.
/// </summary>
/// <remarks>
/// The output pipe follows the transport output contract (<see cref="TransportSettings.CreateOutputPipeOptions"/>),
/// so a client that stops reading is still caught as a slow consumer; frames already handed to the inner transport
/// count against its own limit.
/// </remarks>
internal sealed partial class WebSocketConnection : TransportConnection
{
    private readonly TransportConnection inner;
    private readonly ILogger logger;
    private readonly Pipe input;
    private readonly OutputBuffer output;
    private readonly bool compression;
    private readonly int maxFrameSize;
    private readonly long maxMessageSize;
    private byte[]? closeFrame;

    // Only the latest unanswered ping gets a pong (RFC 6455 5.5.3), so a client that pings without reading cannot
    // make the server queue pongs without bound.
    private byte[]? pendingPong;
    private Task loops = Task.CompletedTask;
    private int aborted;

    public WebSocketConnection(TransportConnection inner, WebSocketSession session, ILogger logger)
        : base(inner.Features)
    {
        this.inner = inner;
        this.logger = logger;
        compression = session.Compression;

        // Browsers cope better with small frames (nats-server's experience), others get larger ones.
        maxFrameSize = session.Browser ? 4096 : 64 * 1024;
        maxMessageSize = session.MaxMessageSize;
        RemoteEndPoint = session.ForwardedFor is { } forwarded && inner.RemoteEndPoint is IPEndPoint remote
            ? new IPEndPoint(forwarded, remote.Port)
            : inner.RemoteEndPoint;
        input = new Pipe(new PipeOptions(
            readerScheduler: PipeScheduler.Inline,
            writerScheduler: PipeScheduler.Inline,
            pauseWriterThreshold: 1024 * 1024,
            resumeWriterThreshold: 512 * 1024,
            useSynchronizationContext: false));
        // What waits here counts on top of what the connection below still holds (the shared feature bag has its count);
        // the broker stalls producers on the two together (IPendingOutputFeature.WhenPendingAtMost).
        // The send loop runs inline on the thread that flushes (the producer's): framing is a copy into the connection
        // below, whose own send loop is the one hop to the socket. On the thread pool it was a second hop per flush.
        output = new OutputBuffer(inner.Settings, inner.Features.Get<IPendingOutputFeature>(), PipeScheduler.Inline);
        Features.Set<IPendingOutputFeature>(output);
        Transport = new DuplexPipe(input.Reader, output.Writer);
    }

    public override string ConnectionId => inner.ConnectionId;

    public override IDuplexPipe Transport { get; set; }

    public override EndPoint? LocalEndPoint => inner.LocalEndPoint;

    /// <summary>The client's address, from <c>X-Forwarded-For</c> when a proxy gave one.</summary>
    public override EndPoint? RemoteEndPoint { get; }

    public override TransportSettings Settings => inner.Settings;

    public override CancellationToken ConnectionClosed => inner.ConnectionClosed;

    public override string? CloseReason => inner.CloseReason;

    private string RemoteName => RemoteEndPoint?.ToString() ?? "?";

    public void Start() => loops = Task.WhenAll(ReceiveAsync(), SendAsync());

    public override void Abort(string reason)
    {
        Interlocked.Exchange(ref aborted, 1);
        inner.Abort(reason);
        output.Reader.CancelPendingRead();
        input.Writer.CancelPendingFlush();
    }

    public override async ValueTask DisposeAsync()
    {
        await output.Writer.CompleteAsync().ConfigureAwait(false);
        await input.Reader.CompleteAsync().ConfigureAwait(false);
        await loops.ConfigureAwait(false);
    }

    /// <summary>Hands a pong to the send loop, which slips it in between data frames.</summary>
    private void SendPong(byte[] frame)
    {
        Volatile.Write(ref pendingPong, frame);
        output.Reader.CancelPendingRead();
    }

    private sealed class DuplexPipe(PipeReader input, PipeWriter output) : IDuplexPipe
    {
        public PipeReader Input { get; } = input;

        public PipeWriter Output { get; } = output;
    }
}

/// <summary>What the handshake decided for one connection.</summary>
internal sealed record WebSocketSession(bool Compression, bool Browser, long MaxMessageSize, IPAddress? ForwardedFor);
