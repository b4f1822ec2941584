using System.Buffers;
using System.IO.Pipelines;

namespace Broker.Abstractions;

/// <summary>Limits a listener applies to the connections it accepts.</summary>
public sealed record TransportSettings
{
    /// <summary>
    /// Bytes a connection may have waiting to be sent before the broker closes it as a slow consumer. Default 64 MiB
    /// (nats-server's <c>max_pending</c>). From three quarters of it on, flushes report backpressure and fast
    /// producers are briefly stalled, as nats-server does.
    /// </summary>
    public long MaxPendingOutputBytes { get; init; } = 64L * 1024 * 1024;

    /// <summary>
    /// How long one send to the peer may block before the transport aborts the connection as a slow consumer.
    /// Default 10 seconds (nats-server's <c>write_deadline</c>). <see cref="TimeSpan.Zero"/> disables it.
    /// </summary>
    public TimeSpan WriteDeadline { get; init; } = TimeSpan.FromSeconds(10);

    /// <summary>
    /// Where output pipes made with <see cref="CreateOutputPipeOptions"/> take their segments. Default
    /// <see langword="null"/>: the pipe's default (the shared array pool). The broker's listeners set a pool that
    /// hands a closed connection's segments to the connections still writing and gives idle ones back to the system,
    /// so what a slow consumer held when it was cut off is reused instead of waiting for a collection.
    /// </summary>
    public MemoryPool<byte>? OutputPool { get; init; }

    // The output pipe's segment size (CreateOutputPipeOptions).
    private const int OutputSegmentSize = 16 * 1024;

    /// <summary>
    /// Options for an output pipe that satisfies the <see cref="TransportConnection"/> output contract: flushes
    /// complete synchronously until three quarters of <see cref="MaxPendingOutputBytes"/> are buffered, and again
    /// once the send loop has brought it below half. Segments are 16 KiB: a connection that holds max_pending for a
    /// stalled peer holds it in a quarter of the segments (and their bookkeeping) that the pipe's default 4 KiB would
    /// take, and wastes less at their ends; an idle connection holds none.
    /// </summary>
    /// <param name="readerScheduler">Where the send loop's continuations run; the thread pool by default.</param>
    /// <returns>The pipe options.</returns>
    public PipeOptions CreateOutputPipeOptions(PipeScheduler? readerScheduler = null)
    {
        var limit = Math.Max(MaxPendingOutputBytes, 4);
        return new PipeOptions(
            readerScheduler: readerScheduler ?? PipeScheduler.ThreadPool,
            writerScheduler: PipeScheduler.Inline,
            pool: OutputPool,
            pauseWriterThreshold: limit / 4 * 3,
            resumeWriterThreshold: limit / 2,
            minimumSegmentSize: OutputSegmentSize,
            useSynchronizationContext: false);
    }
}
