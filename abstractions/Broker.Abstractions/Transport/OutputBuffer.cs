using System.IO.Pipelines;

namespace Broker.Abstractions;

/// <summary>
/// A connection's output buffer that satisfies the <see cref="TransportConnection"/> output contract and knows how
/// much it holds. The application writes to <see cref="Writer"/>; a send loop reads <see cref="Reader"/>, hands the
/// bytes on, and reports them with <see cref="MarkSent"/>. It is the connection's <see cref="IPendingOutputFeature"/>:
/// a wrapper (TLS, WebSocket) passes the feature of the connection below it, whose buffered bytes are added, so the
/// broker sees everything still waiting between the application and the network.
/// </summary>
public sealed class OutputBuffer : IPendingOutputFeature
{
    private readonly Pipe pipe;
    private readonly CountingWriter writer;
    private readonly IPendingOutputFeature? below;
    private long sent;

    /// <summary>Creates the buffer with <see cref="TransportSettings.CreateOutputPipeOptions"/>.</summary>
    /// <param name="settings">The listener's settings.</param>
    /// <param name="below">The pending-output feature of the connection this one writes into, if any.</param>
    /// <param name="readerScheduler">Where the send loop's continuations run; the thread pool by default.</param>
    public OutputBuffer(TransportSettings settings, IPendingOutputFeature? below = null, PipeScheduler? readerScheduler = null)
    {
        ArgumentNullException.ThrowIfNull(settings);
        pipe = new Pipe(OptionsFor(settings, readerScheduler));
        writer = new CountingWriter(pipe.Writer);
        this.below = below;
    }

    // The options of the last settings seen: a listener's connections share its settings instance, so they share one
    // PipeOptions instead of one each (issue 25). A different settings instance or scheduler replaces the entry.
    private static CachedOptions? lastOptions;

    private static PipeOptions OptionsFor(TransportSettings settings, PipeScheduler? readerScheduler)
    {
        var cached = Volatile.Read(ref lastOptions);
        if (cached is not null && ReferenceEquals(cached.Settings, settings) && ReferenceEquals(cached.Scheduler, readerScheduler))
        {
            return cached.Options;
        }

        var options = settings.CreateOutputPipeOptions(readerScheduler);
        Volatile.Write(ref lastOptions, new CachedOptions(settings, readerScheduler, options));
        return options;
    }

    /// <summary>Where the application writes (hand this out as the connection's output).</summary>
    public PipeWriter Writer => writer;

    /// <summary>What the send loop reads.</summary>
    public PipeReader Reader => pipe.Reader;

    /// <summary>Bytes written and not yet reported sent, plus what the connection below still holds.</summary>
    public long PendingOutputBytes => Math.Max(writer.Written - Volatile.Read(ref sent), 0) + (below?.PendingOutputBytes ?? 0);

    /// <summary>Reports bytes the send loop has handed on. Called by the send loop only.</summary>
    /// <param name="bytes">The number of bytes.</param>
    public void MarkSent(long bytes) => Volatile.Write(ref sent, sent + bytes);

    private sealed record CachedOptions(TransportSettings Settings, PipeScheduler? Scheduler, PipeOptions Options);

    // Counts committed bytes: one add per Advance, no allocation. The output contract allows one writer at a time.
    private sealed class CountingWriter(PipeWriter inner) : PipeWriter
    {
        private long written;

        public long Written => Volatile.Read(ref written);

        public override bool CanGetUnflushedBytes => inner.CanGetUnflushedBytes;

        public override long UnflushedBytes => inner.UnflushedBytes;

        public override void Advance(int bytes)
        {
            inner.Advance(bytes);
            Volatile.Write(ref written, written + bytes);
        }

        public override Memory<byte> GetMemory(int sizeHint = 0) => inner.GetMemory(sizeHint);

        public override Span<byte> GetSpan(int sizeHint = 0) => inner.GetSpan(sizeHint);

        public override ValueTask<FlushResult> FlushAsync(CancellationToken cancellationToken = default) => inner.FlushAsync(cancellationToken);

        public override void CancelPendingFlush() => inner.CancelPendingFlush();

        public override void Complete(Exception? exception = null) => inner.Complete(exception);

        public override ValueTask CompleteAsync(Exception? exception = null) => inner.CompleteAsync(exception);
    }
}
