using System.Buffers;
using System.IO.Pipelines;
using System.Runtime.CompilerServices;

namespace Broker.Benchmarks.Libraries;

/// <summary>
/// A <see cref="Stream"/> over a transport's two pipes: what the BCL <c>WebSocket</c> needs, and what the broker would
/// have to put between its pipe-based <c>TransportConnection</c> and <c>WebSocket.CreateFromStream</c>. Reads take
/// what the input pipe holds (synchronously when it holds something); writes copy into the output pipe without
/// flushing, so the caller flushes once per batch, as the adapter's send loop does.
/// </summary>
internal sealed class PipeDuplexStream(PipeReader input, PipeWriter output) : Stream
{
    public override bool CanRead => true;

    public override bool CanSeek => false;

    public override bool CanWrite => true;

    public override long Length => throw new NotSupportedException();

    public override long Position { get => throw new NotSupportedException(); set => throw new NotSupportedException(); }

    public override ValueTask<int> ReadAsync(Memory<byte> buffer, CancellationToken cancellationToken = default)
        => input.TryRead(out var result) ? new ValueTask<int>(Consume(result, buffer.Span)) : ReadSlowAsync(buffer, cancellationToken);

    public override Task<int> ReadAsync(byte[] buffer, int offset, int count, CancellationToken cancellationToken)
        => ReadAsync(buffer.AsMemory(offset, count), cancellationToken).AsTask();

    public override int Read(byte[] buffer, int offset, int count) => ReadAsync(buffer.AsMemory(offset, count)).AsTask().GetAwaiter().GetResult();

    public override ValueTask WriteAsync(ReadOnlyMemory<byte> buffer, CancellationToken cancellationToken = default)
    {
        output.Write(buffer.Span);
        return default;
    }

    public override Task WriteAsync(byte[] buffer, int offset, int count, CancellationToken cancellationToken)
    {
        output.Write(buffer.AsSpan(offset, count));
        return Task.CompletedTask;
    }

    public override void Write(byte[] buffer, int offset, int count) => output.Write(buffer.AsSpan(offset, count));

    public override void Write(ReadOnlySpan<byte> buffer) => output.Write(buffer);

    // The caller flushes the pipe once per batch.
    public override Task FlushAsync(CancellationToken cancellationToken) => Task.CompletedTask;

    public override void Flush()
    {
    }

    public override long Seek(long offset, SeekOrigin origin) => throw new NotSupportedException();

    public override void SetLength(long value) => throw new NotSupportedException();

    // Pooled like the BCL's own async paths, so a read that waits allocates nothing here (what the bridge costs is
    // then the BCL's, not this benchmark's).
    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder<>))]
    private async ValueTask<int> ReadSlowAsync(Memory<byte> buffer, CancellationToken cancellationToken)
    {
        var result = await input.ReadAsync(cancellationToken).ConfigureAwait(false);
        return Consume(result, buffer.Span);
    }

    private int Consume(ReadResult result, Span<byte> destination)
    {
        var source = result.Buffer;
        var count = (int)Math.Min(source.Length, destination.Length);
        source.Slice(0, count).CopyTo(destination);
        input.AdvanceTo(source.GetPosition(count));
        return count;
    }
}
