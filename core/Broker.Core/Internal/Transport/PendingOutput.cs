using System.IO.Pipelines;

namespace Broker.Core.Internal.Transport;

/// <summary>
/// A connection feature (in <see cref="Broker.Abstractions.TransportConnection.Features"/>) reporting the bytes the
/// transport has accepted for sending but not yet sent: nats-server's <c>pending_bytes</c> in /connz.
/// </summary>
internal interface IPendingOutputFeature
{
    long PendingOutputBytes { get; }
}

/// <summary>
/// The output writer the socket transport hands out: it forwards to the pipe and counts the bytes committed, so the
/// send loop's count of bytes sent gives what is pending. One counter add per Advance; no allocation.
/// </summary>
internal sealed class CountingPipeWriter(PipeWriter inner) : PipeWriter
{
    // Written by the one writer at a time the output contract allows; read by monitoring (64-bit reads are atomic).
    private long written;

    public long Written => Volatile.Read(ref written);

    public override bool CanGetUnflushedBytes => inner.CanGetUnflushedBytes;

    public override long UnflushedBytes => inner.UnflushedBytes;

    public override void Advance(int bytes)
    {
        inner.Advance(bytes);
        written += bytes;
    }

    public override Memory<byte> GetMemory(int sizeHint = 0) => inner.GetMemory(sizeHint);

    public override Span<byte> GetSpan(int sizeHint = 0) => inner.GetSpan(sizeHint);

    public override ValueTask<FlushResult> FlushAsync(CancellationToken cancellationToken = default) => inner.FlushAsync(cancellationToken);

    public override void CancelPendingFlush() => inner.CancelPendingFlush();

    public override void Complete(Exception? exception = null) => inner.Complete(exception);

    public override ValueTask CompleteAsync(Exception? exception = null) => inner.CompleteAsync(exception);
}
