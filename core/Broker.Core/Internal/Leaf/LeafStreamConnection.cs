using System.Buffers;
using System.IO.Pipelines;
using System.Net;
using Broker.Abstractions;
using Broker.Core.Internal.Transport;

namespace Broker.Core.Internal.Leaf;

/// <summary>
/// A leaf link's transport over a <see cref="Stream"/> (an <see cref="System.Net.Security.SslStream"/>, or a
/// <see cref="System.Net.WebSockets.WebSocketStream"/> over either): a receive loop fills the input pipe from the stream
/// and a send loop drains an <see cref="OutputBuffer"/> into it, so the link's output follows the transport output
/// contract (slow hubs are caught by their pending bytes) as on a plain socket. What was read before the stream took
/// over (the hub's INFO, read in clear text before the TLS upgrade) is the input's first bytes.
/// </summary>
internal sealed class LeafStreamConnection : TransportConnection
{
    // Reads ask for this much buffer; a TLS record carries at most 16 KiB.
    private const int ReceiveBufferSize = 16 * 1024;

    private readonly Stream stream;
    private readonly Pipe input;
    private readonly OutputBuffer output;
    private readonly CancellationTokenSource closed = new();
    private readonly byte[] preface;
    private Task loops = Task.CompletedTask;
    private string? closeReason;
    private int aborted;

    public LeafStreamConnection(Stream stream, TransportSettings settings, EndPoint? local, EndPoint? remote, byte[] preface)
    {
        this.stream = stream;
        this.preface = preface;
        Settings = settings;
        LocalEndPoint = local;
        RemoteEndPoint = remote;
        ConnectionId = "leaf-" + Interlocked.Increment(ref nextId).ToString(System.Globalization.CultureInfo.InvariantCulture);
        input = SocketConnection.CreateInputPipe();
        output = new OutputBuffer(settings, below: null, PipeScheduler.ThreadPool);
        Transport = new SocketConnection.DuplexPipe(input.Reader, output.Writer);
        Features.Set<IPendingOutputFeature>(output);
    }

    private static long nextId;

    public override string ConnectionId { get; }

    public override IDuplexPipe Transport { get; set; }

    public override EndPoint? LocalEndPoint { get; }

    public override EndPoint? RemoteEndPoint { get; }

    public override TransportSettings Settings { get; }

    public override CancellationToken ConnectionClosed => closed.Token;

    public override string? CloseReason => closeReason;

    /// <summary>Starts the loops, the preface first.</summary>
    public void Start()
    {
        input.Writer.Write(preface);
        loops = Task.WhenAll(ReceiveAsync(), SendAsync());
    }

    public override void Abort(string reason)
    {
        if (Interlocked.Exchange(ref aborted, 1) != 0)
        {
            return;
        }

        closeReason ??= reason;
        stream.Dispose();
        input.Writer.CancelPendingFlush();
        output.Reader.CancelPendingRead();
        SignalClosed();
    }

    public override async ValueTask DisposeAsync()
    {
        try
        {
            output.Writer.Complete();
            await loops.ConfigureAwait(false);
        }
        finally
        {
            await stream.DisposeAsync().ConfigureAwait(false);
            SignalClosed();
            closed.Dispose();
        }
    }

    private async Task ReceiveAsync()
    {
        var writer = input.Writer;
        try
        {
            // The preface is flushed with the first read's bytes, or alone when nothing more comes.
            var flush = await writer.FlushAsync().ConfigureAwait(false);
            while (!flush.IsCompleted && !flush.IsCanceled)
            {
                var memory = writer.GetMemory(ReceiveBufferSize);
                var read = await stream.ReadAsync(memory).ConfigureAwait(false);
                if (read == 0)
                {
                    break;
                }

                writer.Advance(read);
                flush = await writer.FlushAsync().ConfigureAwait(false);
            }
        }
        catch (Exception ex) when (ex is IOException or ObjectDisposedException or InvalidOperationException or NotSupportedException
            or System.Net.WebSockets.WebSocketException)
        {
            // A reset, a bad record or frame, or an abort: the link just sees the end of its input.
        }
        finally
        {
            await writer.CompleteAsync().ConfigureAwait(false);
        }
    }

    private async Task SendAsync()
    {
        var reader = output.Reader;
        try
        {
            while (true)
            {
                var result = await reader.ReadAsync().ConfigureAwait(false);
                if (result.IsCanceled)
                {
                    break;
                }

                var buffer = result.Buffer;
                foreach (var segment in buffer)
                {
                    await stream.WriteAsync(segment).ConfigureAwait(false);
                }

                await stream.FlushAsync().ConfigureAwait(false);
                output.MarkSent(buffer.Length);
                reader.AdvanceTo(buffer.End);
                if (result.IsCompleted)
                {
                    break;
                }
            }
        }
        catch (Exception ex) when (ex is IOException or ObjectDisposedException or InvalidOperationException or NotSupportedException
            or System.Net.WebSockets.WebSocketException)
        {
        }
        finally
        {
            await reader.CompleteAsync().ConfigureAwait(false);
        }
    }

    private void SignalClosed()
    {
        try
        {
            closed.Cancel();
        }
        catch (ObjectDisposedException)
        {
        }
    }
}
