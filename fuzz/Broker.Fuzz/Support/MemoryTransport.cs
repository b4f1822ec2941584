using System.IO.Pipelines;
using System.Net;
using Broker.Abstractions;

namespace Broker.Fuzz.Support;

/// <summary>
/// A transport connection without a socket: the target writes what the peer sends into <see cref="PeerInput"/> and
/// reads what the server sent from <see cref="PeerOutput"/>. Inline schedulers make each write run the server's read
/// loop to completion before it returns, so a cut-up input is processed piece by piece, deterministically.
/// </summary>
internal sealed class MemoryTransport : TransportConnection
{
    private readonly Pipe input = new(new PipeOptions(readerScheduler: PipeScheduler.Inline, writerScheduler: PipeScheduler.Inline, useSynchronizationContext: false));
    private readonly Pipe output = new(new PipeOptions(readerScheduler: PipeScheduler.Inline, writerScheduler: PipeScheduler.Inline, pauseWriterThreshold: 0, useSynchronizationContext: false));
    private readonly CancellationTokenSource closed = new();

    public MemoryTransport()
    {
        Transport = new DuplexPipe(input.Reader, output.Writer);
    }

    public override string ConnectionId => "fuzz";

    public override IDuplexPipe Transport { get; set; }

    public override EndPoint? LocalEndPoint { get; } = new IPEndPoint(IPAddress.Loopback, 8080);

    public override EndPoint? RemoteEndPoint { get; } = new IPEndPoint(IPAddress.Loopback, 50000);

    public override TransportSettings Settings { get; } = new();

    public override CancellationToken ConnectionClosed => closed.Token;

    public PipeWriter PeerInput => input.Writer;

    public PipeReader PeerOutput => output.Reader;

    public override void Abort(string reason)
    {
        closed.Cancel();
        output.Reader.CancelPendingRead();
        input.Writer.CancelPendingFlush();
    }

    public override async ValueTask DisposeAsync()
    {
        await input.Writer.CompleteAsync().ConfigureAwait(false);
        await output.Reader.CompleteAsync().ConfigureAwait(false);
        closed.Dispose();
    }

    /// <summary>Reads a pipe to its end (it must be completed, or complete while reading).</summary>
    public static async Task<byte[]> ReadToEndAsync(PipeReader reader)
    {
        var bytes = new List<byte>();
        while (true)
        {
            var result = await reader.ReadAsync().ConfigureAwait(false);
            foreach (var segment in result.Buffer)
            {
                bytes.AddRange(segment.Span);
            }

            reader.AdvanceTo(result.Buffer.End);
            if (result.IsCompleted || result.IsCanceled)
            {
                return [.. bytes];
            }
        }
    }

    private sealed class DuplexPipe(PipeReader input, PipeWriter output) : IDuplexPipe
    {
        public PipeReader Input { get; } = input;

        public PipeWriter Output { get; } = output;
    }
}
