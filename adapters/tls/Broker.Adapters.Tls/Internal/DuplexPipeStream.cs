using System.IO.Pipelines;

namespace Broker.Adapters.Tls.Internal;

/// <summary>
/// The raw connection as a <see cref="Stream"/> for <see cref="System.Net.Security.SslStream"/>: reads come from the
/// inner pipe's input and writes go to its output, flushed at once so handshake records leave without delay.
/// The pipes are not completed by disposing the stream; <see cref="TlsConnection"/> completes them.
/// </summary>
internal sealed class DuplexPipeStream : Stream
{
    private readonly Stream input;
    private readonly Stream output;

    public DuplexPipeStream(IDuplexPipe pipe)
    {
        input = pipe.Input.AsStream(leaveOpen: true);
        output = pipe.Output.AsStream(leaveOpen: true);
    }

    public override bool CanRead => true;

    public override bool CanSeek => false;

    public override bool CanWrite => true;

    public override long Length => throw new NotSupportedException();

    public override long Position
    {
        get => throw new NotSupportedException();
        set => throw new NotSupportedException();
    }

    public override int Read(byte[] buffer, int offset, int count) => input.Read(buffer, offset, count);

    public override ValueTask<int> ReadAsync(Memory<byte> buffer, CancellationToken cancellationToken = default)
        => input.ReadAsync(buffer, cancellationToken);

    public override Task<int> ReadAsync(byte[] buffer, int offset, int count, CancellationToken cancellationToken)
        => input.ReadAsync(buffer, offset, count, cancellationToken);

    public override void Write(byte[] buffer, int offset, int count) => output.Write(buffer, offset, count);

    public override ValueTask WriteAsync(ReadOnlyMemory<byte> buffer, CancellationToken cancellationToken = default)
        => output.WriteAsync(buffer, cancellationToken);

    public override Task WriteAsync(byte[] buffer, int offset, int count, CancellationToken cancellationToken)
        => output.WriteAsync(buffer, offset, count, cancellationToken);

    public override void Flush() => output.Flush();

    public override Task FlushAsync(CancellationToken cancellationToken) => output.FlushAsync(cancellationToken);

    public override long Seek(long offset, SeekOrigin origin) => throw new NotSupportedException();

    public override void SetLength(long value) => throw new NotSupportedException();

    protected override void Dispose(bool disposing)
    {
        if (disposing)
        {
            input.Dispose();
            output.Dispose();
        }

        base.Dispose(disposing);
    }
}
