using System.IO.Pipelines;

namespace Broker.Bus.Tests;

/// <summary>A connection's pipe with its output's flushes counted: what an adapter's output costs in flushes.</summary>
internal sealed class CountingTransport(IDuplexPipe inner) : IDuplexPipe
{
    private readonly CountingWriter output = new(inner.Output);

    public PipeReader Input => inner.Input;

    public PipeWriter Output => output;

    public int Flushes => output.Flushes;

    private sealed class CountingWriter(PipeWriter inner) : PipeWriter
    {
        private int flushes;

        public int Flushes => Volatile.Read(ref flushes);

        public override void Advance(int bytes) => inner.Advance(bytes);

        public override Memory<byte> GetMemory(int sizeHint = 0) => inner.GetMemory(sizeHint);

        public override Span<byte> GetSpan(int sizeHint = 0) => inner.GetSpan(sizeHint);

        public override ValueTask<FlushResult> FlushAsync(CancellationToken cancellationToken = default)
        {
            Interlocked.Increment(ref flushes);
            return inner.FlushAsync(cancellationToken);
        }

        public override void CancelPendingFlush() => inner.CancelPendingFlush();

        public override void Complete(Exception? exception = null) => inner.Complete(exception);
    }
}
