using System.IO.Pipelines;
using System.Net;
using Broker.Abstractions;

namespace Broker.Benchmarks.Embedded;

/// <summary>
/// A transport connection with no socket: the benchmark plays the peer, writing client bytes into
/// <see cref="PeerInput"/> and draining what the broker sends from <see cref="PeerOutput"/>. The output pipe uses
/// the same options as the TCP transport, so flushes behave as in production (synchronous below max_pending).
/// </summary>
internal sealed class InMemoryConnection : TransportConnection
{
    private static long nextId;

    private readonly Pipe input;
    private readonly Pipe output;
    private readonly CancellationTokenSource closed = new();

    public InMemoryConnection(TransportSettings? settings = null)
    {
        Settings = settings ?? new TransportSettings();
        ConnectionId = "mem-" + Interlocked.Increment(ref nextId);

        // Inline schedulers: the broker's read loop runs on the thread that writes the peer's input, so a setup
        // step has completed when its write returns.
        input = new Pipe(new PipeOptions(readerScheduler: PipeScheduler.Inline, writerScheduler: PipeScheduler.Inline, useSynchronizationContext: false));
        output = new Pipe(Settings.CreateOutputPipeOptions(PipeScheduler.Inline));
        Transport = new DuplexPipe(input.Reader, output.Writer);
    }

    public override string ConnectionId { get; }

    public override IDuplexPipe Transport { get; set; }

    public override EndPoint? LocalEndPoint { get; } = new IPEndPoint(IPAddress.Loopback, 4222);

    public override EndPoint? RemoteEndPoint { get; } = new IPEndPoint(IPAddress.Loopback, 50000);

    public override TransportSettings Settings { get; }

    public override CancellationToken ConnectionClosed => closed.Token;

    /// <summary>Where the benchmark writes what the client would send.</summary>
    public PipeWriter PeerInput => input.Writer;

    /// <summary>Where the benchmark reads what the broker sent.</summary>
    public PipeReader PeerOutput => output.Reader;

    /// <summary>Consumes everything the broker has flushed so far; returns the byte count. Allocation-free.</summary>
    public long Drain()
    {
        long total = 0;
        var reader = output.Reader;
        while (reader.TryRead(out var result))
        {
            total += result.Buffer.Length;
            reader.AdvanceTo(result.Buffer.End);
            if (result.IsCompleted)
            {
                break;
            }
        }

        return total;
    }

    /// <summary>Consumes what the broker sent until <paramref name="marker"/> appears; for setup only.</summary>
    public async Task<string> ReadUntilAsync(string marker, TimeSpan timeout)
    {
        using var cancel = new CancellationTokenSource(timeout);
        var text = new System.Text.StringBuilder();
        var reader = output.Reader;
        while (true)
        {
            var result = await reader.ReadAsync(cancel.Token).ConfigureAwait(false);
            foreach (var segment in result.Buffer)
            {
                text.Append(System.Text.Encoding.ASCII.GetString(segment.Span));
            }

            reader.AdvanceTo(result.Buffer.End);
            var received = text.ToString();
            if (received.Contains(marker, StringComparison.Ordinal))
            {
                return received;
            }

            if (result.IsCompleted)
            {
                throw new InvalidOperationException($"The broker closed the connection before sending '{marker.Trim()}': {received}");
            }
        }
    }

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
        closed.Cancel();
        closed.Dispose();
    }

    private sealed class DuplexPipe(PipeReader input, PipeWriter output) : IDuplexPipe
    {
        public PipeReader Input { get; } = input;

        public PipeWriter Output { get; } = output;
    }
}
