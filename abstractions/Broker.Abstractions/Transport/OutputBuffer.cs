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
#pragma warning disable RS0027 // The shipped constructor keeps its optional parameters; the threshold overload was added beside it.
    public OutputBuffer(TransportSettings settings, IPendingOutputFeature? below = null, PipeScheduler? readerScheduler = null)
#pragma warning restore RS0027
        : this(settings, below, readerScheduler, pauseWriterThreshold: 0)
    {
    }

    /// <summary>
    /// Creates the buffer with <see cref="TransportSettings.CreateOutputPipeOptions"/> but a writer that pauses at
    /// <paramref name="pauseWriterThreshold"/> bytes (and resumes at half of it). A wrapper whose send loop moves the
    /// whole buffer into the connection <paramref name="below"/> at each read (WebSocket) gives a small threshold: the
    /// broker stalls producers when this buffer's flush stops completing and closes the subscriber once more than
    /// max_pending waits in all layers together, so this buffer must pause well before the layers' sum reaches it.
    /// </summary>
    /// <param name="settings">The listener's settings.</param>
    /// <param name="below">The pending-output feature of the connection this one writes into, if any.</param>
    /// <param name="readerScheduler">Where the send loop's continuations run; <see langword="null"/> for the thread pool.</param>
    /// <param name="pauseWriterThreshold">Bytes at which flushes stop completing; 0 for the settings' three quarters of max_pending.</param>
    public OutputBuffer(TransportSettings settings, IPendingOutputFeature? below, PipeScheduler? readerScheduler, long pauseWriterThreshold)
    {
        ArgumentNullException.ThrowIfNull(settings);
        ArgumentOutOfRangeException.ThrowIfNegative(pauseWriterThreshold);
        pipe = new Pipe(pauseWriterThreshold == 0 ? OptionsFor(ref lastOptions, settings, readerScheduler, 0) : OptionsFor(ref lastEarlyOptions, settings, readerScheduler, Math.Max(pauseWriterThreshold, 2)));
        writer = new CountingWriter(pipe.Writer);
        this.below = below;
    }

    // The options of the last settings seen: a listener's connections share its settings instance, so they share one
    // PipeOptions instead of one each (issue 25). A different settings instance, scheduler or threshold replaces the entry.
    private static CachedOptions? lastOptions;

    // The same for buffers with their own pause threshold.
    private static CachedOptions? lastEarlyOptions;

    private static PipeOptions OptionsFor(ref CachedOptions? last, TransportSettings settings, PipeScheduler? readerScheduler, long pauseWriterThreshold)
    {
        var cached = Volatile.Read(ref last);
        if (cached is not null && ReferenceEquals(cached.Settings, settings) && ReferenceEquals(cached.Scheduler, readerScheduler) && cached.Pause == pauseWriterThreshold)
        {
            return cached.Options;
        }

        var options = settings.CreateOutputPipeOptions(readerScheduler);
        if (pauseWriterThreshold > 0)
        {
            options = new PipeOptions(
                options.Pool,
                options.ReaderScheduler,
                options.WriterScheduler,
                pauseWriterThreshold,
                pauseWriterThreshold / 2,
                options.MinimumSegmentSize,
                options.UseSynchronizationContext);
        }

        Volatile.Write(ref last, new CachedOptions(settings, readerScheduler, pauseWriterThreshold, options));
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

    private sealed record CachedOptions(TransportSettings Settings, PipeScheduler? Scheduler, long Pause, PipeOptions Options);

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
