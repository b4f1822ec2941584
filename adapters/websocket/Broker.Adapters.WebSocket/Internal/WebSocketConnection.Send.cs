using System.Buffers;
using System.IO.Pipelines;

namespace Broker.Adapters.WebSocket.Internal;

/// <summary>
/// The send loop: what the protocol wrote goes out as binary messages of at most one frame each (compressed when
/// negotiated and worth it), a pong is slipped in between, and a close frame is the last thing sent.
/// </summary>
internal sealed partial class WebSocketConnection
{
    private async Task SendAsync()
    {
        var reader = output.Reader;
        var writer = inner.Transport.Output;
        try
        {
            while (true)
            {
                var result = await reader.ReadAsync().ConfigureAwait(false);
                WriteControlFrames(writer);
                if (Volatile.Read(ref aborted) != 0)
                {
                    break;
                }

                var buffer = result.Buffer;
                WriteDataFrames(writer, buffer);
                output.MarkSent(buffer.Length);
                reader.AdvanceTo(buffer.End);
                if (result.IsCompleted)
                {
                    // The protocol closed the connection: end the WebSocket session properly.
                    writer.Write(Volatile.Read(ref closeFrame) ?? Frames.CloseFrame(Frames.NormalClosure, string.Empty));
                    await writer.FlushAsync().ConfigureAwait(false);
                    break;
                }

                var flush = await writer.FlushAsync().ConfigureAwait(false);
                if (flush.IsCompleted)
                {
                    break;
                }
            }
        }
        catch (Exception ex) when (ex is IOException or InvalidOperationException or ObjectDisposedException)
        {
        }
        finally
        {
            await reader.CompleteAsync().ConfigureAwait(false);
            await writer.CompleteAsync().ConfigureAwait(false);
        }
    }

    private void WriteControlFrames(PipeWriter writer)
    {
        if (Interlocked.Exchange(ref pendingPong, null) is { } pong)
        {
            writer.Write(pong);
        }
    }

    // The send loop's buffer for compressing messages, kept between messages (only the send loop uses it).
    private MemoryStream? deflateScratch;

    private void WriteDataFrames(PipeWriter writer, ReadOnlySequence<byte> buffer)
    {
        while (!buffer.IsEmpty)
        {
            var chunk = buffer.Slice(0, Math.Min(buffer.Length, maxFrameSize));
            buffer = buffer.Slice(chunk.End);
            if (compression && chunk.Length >= Frames.CompressThreshold)
            {
                var scratch = deflateScratch ??= new MemoryStream();
                var compressed = Frames.Deflate(chunk, scratch);
                Frames.WriteHeader(writer, Frames.Binary, compressed: true, compressed.Length);
                writer.Write(compressed);
                if (scratch.Capacity > Frames.KeptScratchCapacity)
                {
                    deflateScratch = null;
                }

                continue;
            }

            Frames.WriteHeader(writer, Frames.Binary, compressed: false, chunk.Length);
            foreach (var segment in chunk)
            {
                writer.Write(segment.Span);
            }
        }
    }
}
