using System.IO.Pipelines;

namespace Broker.Abstractions;

/// <summary>
/// A connection's output buffer that satisfies the <see cref="TransportConnection"/> output contract and knows how
/// much it holds. The application writes to <see cref="Writer"/>; a send loop reads <see cref="Reader"/>, hands the
/// bytes on, and reports them with <see cref="MarkSent"/>. It is the connection's <see cref="IPendingOutputFeature"/>:
/// a wrapper (TLS, WebSocket) passes the feature of the connection below it, whose buffered bytes are added, so the
/// broker sees everything still waiting between the application and the network, and can wait for all of it to
/// drain (<see cref="IPendingOutputFeature.WhenPendingAtMost"/>).
/// </summary>
public sealed class OutputBuffer : IPendingOutputFeature
{
    private readonly Pipe pipe;
    private readonly CountingWriter writer;
    private readonly IPendingOutputFeature? below;
    private long sent;

    // A producer's wait for this layer and those below to drain (WhenPendingAtMost); made only while one waits.
    private DrainWaiter? drainWaiter;

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
    public void MarkSent(long bytes)
    {
        // A full fence between the count and the look at the waiter: a waiter registered at the same time either sees
        // the new count or is seen here (WhenPendingAtMost registers, then looks).
        Interlocked.Add(ref sent, bytes);
        if (Volatile.Read(ref drainWaiter) is { } waiter)
        {
            Check(waiter);
        }
    }

    /// <inheritdoc/>
    Task? IPendingOutputFeature.WhenPendingAtMost(long bytes)
    {
        var waiter = Volatile.Read(ref drainWaiter);
        if (PendingOutputBytes <= bytes)
        {
            // A wait for less than that comes true too (the largest asked for counts).
            if (waiter is not null)
            {
                waiter.Raise(bytes);
                Check(waiter);
            }

            return null;
        }

        while (waiter is null || waiter.Task.IsCompleted)
        {
            var made = new DrainWaiter(this, bytes);
            var seen = Interlocked.CompareExchange(ref drainWaiter, made, waiter);
            waiter = ReferenceEquals(seen, waiter) ? made : seen;
        }

        waiter.Raise(bytes);
        Check(waiter);
        return waiter.Task;
    }

    // This layer's own bytes not yet handed on.
    private long OwnPending => Math.Max(writer.Written - Volatile.Read(ref sent), 0);

    // Completes the waiter once this layer and those below hold no more than it allows; otherwise, with a layer below,
    // waits for that one to hold no more than what this one leaves room for. Called at each of this layer's sends and
    // when the layer below drained (what this layer holds then moved down or grew, hence a fresh look each time).
    private void Check(DrainWaiter waiter)
    {
        // A few looks at most: a producer's next flush, this layer's next send or the layer below looks again.
        for (var look = 0; look < 4 && !waiter.Task.IsCompleted; look++)
        {
            var own = OwnPending;
            var most = Volatile.Read(ref waiter.Bytes);
            if (own + (below?.PendingOutputBytes ?? 0) <= most)
            {
                waiter.TrySetResult();
                Interlocked.CompareExchange(ref drainWaiter, null, waiter);
                return;
            }

            if (below is null)
            {
                return;
            }

            if (below.WhenPendingAtMost(Math.Max(most - own, 0)) is { } drained)
            {
                waiter.Follow(drained);
                return;
            }

            // The layer below holds no more than that already (this one grew meanwhile), or cannot tell: look again.
        }
    }

    private sealed record CachedOptions(TransportSettings Settings, PipeScheduler? Scheduler, PipeOptions Options);

    // One wait for the layers to drain, shared by every producer stalled on this connection; its continuations run on
    // the thread pool, not on the send loop that completes it.
    private sealed class DrainWaiter(OutputBuffer owner, long bytes) : TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously)
    {
        // The most that may wait: the largest asked for, the first to come true (a caller that wanted less looks again).
        public long Bytes = bytes;

        // The task of the layer below that this one follows.
        private Task? below;

        public void Raise(long bytes)
        {
            var current = Volatile.Read(ref Bytes);
            while (current < bytes && Interlocked.CompareExchange(ref Bytes, bytes, current) is var seen && seen != current)
            {
                current = seen;
            }
        }

        public void Follow(Task drained)
        {
            if (!ReferenceEquals(Interlocked.Exchange(ref below, drained), drained))
            {
                _ = drained.ContinueWith(static (_, state) => ((DrainWaiter)state!).Owner.Check((DrainWaiter)state!), this, CancellationToken.None, TaskContinuationOptions.ExecuteSynchronously, TaskScheduler.Default);
            }
        }

        public OutputBuffer Owner => owner;
    }

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
