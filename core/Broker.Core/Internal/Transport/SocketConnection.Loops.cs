using System.IO.Pipelines;
using System.Net.Sockets;
using System.Runtime.CompilerServices;
using Broker.Abstractions;

namespace Broker.Core.Internal.Transport;

/// <summary>The receive and send loops.</summary>
internal sealed partial class SocketConnection
{
    /// <summary>The close reason reported when a send blocked longer than the write deadline.</summary>
    public const string WriteDeadlineReason = "Slow Consumer (Write Deadline)";

    // How long a closing connection waits for the peer to close after our last bytes went out. Closing a socket
    // with unread input makes the kernel send RST, which can destroy the final -ERR before the peer reads it.
    private static readonly TimeSpan LingerTimeout = TimeSpan.FromSeconds(2);

    // The most one send call hands the kernel. A peer that reads slowly then shows progress as it reads (the broker
    // tells a slow reader from a stopped one by it, StallPolicy) rather than once a whole backlog has gone.
    private const int MaxSendBytes = 256 * 1024;

    // Input that arrives after the application stopped reading is discarded here.
    internal static readonly byte[] DrainBuffer = new byte[4096];

    internal void CheckWriteDeadline(long now, long deadlineMilliseconds)
    {
        var started = SendStartedAt;
        if (started != 0 && now - started > deadlineMilliseconds)
        {
            Abort(WriteDeadlineReason);
        }
    }

    /// <summary>Whether the connection was aborted (its output is then dropped, not closed gracefully).</summary>
    internal bool IsAborted => Has(Aborted);

    /// <summary>
    /// Sends the start of <paramref name="buffer"/> (at most <see cref="MaxSendBytes"/>) for an on-demand output
    /// (<see cref="SocketOutputWriter"/>), as the send loop does; returns what was sent. Pooled: no allocation per send.
    /// </summary>
    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder<>))]
    internal async ValueTask<System.Buffers.ReadOnlySequence<byte>> SendAsync(System.Buffers.ReadOnlySequence<byte> buffer, EpollSocket? epoll = null)
    {
        if (buffer.Length > MaxSendBytes)
        {
            buffer = buffer.Slice(0, MaxSendBytes);
        }

        if (buffer.IsEmpty)
        {
            return buffer;
        }

        Volatile.Write(ref sendStartedAt, Math.Max(Environment.TickCount64, 1));
        if (epoll is not null)
        {
            // Non-blocking sends until the kernel took it all; while its buffer is full, the wait for EPOLLOUT keeps this
            // pooled state machine (a connection that is not back-pressured holds none). The write deadline sees it.
            var rest = buffer;
            while (true)
            {
                rest = rest.Slice(epoll.TrySend(rest));
                if (rest.IsEmpty)
                {
                    break;
                }

                await epoll.WhenWritable().ConfigureAwait(false);
            }
        }
        else
        {
            var sender = SocketSenderPool.Rent();
            try
            {
                await sender.SendAsync(socket!, buffer).ConfigureAwait(false);
            }
            catch
            {
                sender.Dispose();
                throw;
            }

            SocketSenderPool.Return(sender);
        }

        Volatile.Write(ref sendStartedAt, 0);
        return buffer;
    }

    /// <summary>
    /// After an on-demand output's last bytes: sends FIN, then gives the peer a moment to close (the input is drained
    /// meanwhile, as the send loop's close does).
    /// </summary>
    internal async Task CloseGracefullyAsync()
    {
        Set(ShutDownSend);
        (RuntimeSocket() ?? throw new ObjectDisposedException(nameof(Socket))).Shutdown(SocketShutdown.Send);
        await Task.WhenAny(Lingering(), Task.Delay(LingerTimeout)).ConfigureAwait(false);
    }

    // What the close waits for: the input's drain until the peer closes.
    private Task Lingering() => Volatile.Read(ref inputSide) is SocketInputReader onDemand ? onDemand.WhenDrained() : receiveTask;

    // The loops read their pipe from the field rather than take it as a parameter: a parameter is one more field of
    // the parked state machine (8 B per NATS connection; issue 25).
    private async Task ReceiveLoopAsync()
    {
        var writer = Unsafe.As<Pipe>(inputSide)!.Writer;
        var sizing = default(ReceiveSizing);
        var draining = false;
        try
        {
            while (true)
            {
                if (draining)
                {
                    if (await socket!.ReceiveAsync(DrainBuffer, SocketFlags.None).ConfigureAwait(false) == 0)
                    {
                        break;
                    }

                    continue;
                }

                if (sizing.WaitFirst)
                {
                    // A zero-byte receive waits for data without holding a buffer, so idle connections cost no memory;
                    // a busy one skips it (ReceiveSizing).
                    await socket!.ReceiveAsync(Memory<byte>.Empty, SocketFlags.None).ConfigureAwait(false);
                }

                var memory = writer.GetMemory(sizing.Size);
                var received = await socket!.ReceiveAsync(memory, SocketFlags.None).ConfigureAwait(false);
                if (received == 0)
                {
                    break;
                }

                writer.Advance(received);

                // A small read is parsed here (on the socket engine's thread under inline completions); a large one
                // on a worker, while this loop receives again (InputReaderScheduler).
                var here = InputReaderScheduler.ParseHere(sizing.IsSmall(received));
                sizing.Record(received, memory.Length);
                var flush = await InputReaderScheduler.FlushAsync(writer, here).ConfigureAwait(false);
                if (flush.IsCanceled)
                {
                    break;
                }

                // The application stopped reading (it is closing the connection): keep draining until the peer
                // closes, so our last bytes are not reset away.
                draining = flush.IsCompleted;
            }
        }
        catch (Exception ex) when (ex is SocketException or ObjectDisposedException)
        {
            // Reset by the peer or aborted by us: either way the application just sees the end of its input.
        }
        finally
        {
            await writer.CompleteAsync().ConfigureAwait(false);
        }
    }

    private async Task SendLoopAsync()
    {
        var reader = Unsafe.As<OutputBuffer>(outputSide)!.Reader;
        var graceful = false;
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
                if (buffer.Length > MaxSendBytes)
                {
                    // The rest is read again at once: it has not been examined.
                    buffer = buffer.Slice(0, MaxSendBytes);
                }

                if (!buffer.IsEmpty)
                {
                    Volatile.Write(ref sendStartedAt, Math.Max(Environment.TickCount64, 1));

                    // Rented for this send only: an idle connection holds none. A send that failed is not returned.
                    var sender = SocketSenderPool.Rent();
                    try
                    {
                        await sender.SendAsync(socket!, buffer).ConfigureAwait(false);
                    }
                    catch
                    {
                        sender.Dispose();
                        throw;
                    }

                    SocketSenderPool.Return(sender);
                    Volatile.Write(ref sendStartedAt, 0);
                    Unsafe.As<OutputBuffer>(outputSide)!.MarkSent(buffer.Length);
                }

                reader.AdvanceTo(buffer.End);
                if (result.IsCompleted && buffer.End.Equals(result.Buffer.End))
                {
                    graceful = !Has(Aborted);
                    break;
                }
            }

            if (graceful)
            {
                // Everything the application wrote has been sent: send FIN, then give the peer a moment to close.
                socket!.Shutdown(SocketShutdown.Send);
                await Task.WhenAny(Lingering(), Task.Delay(LingerTimeout)).ConfigureAwait(false);
            }
        }
        catch (Exception ex) when (ex is SocketException or ObjectDisposedException)
        {
        }
        finally
        {
            await reader.CompleteAsync().ConfigureAwait(false);
            Abort(closeReason ?? "closed");
        }
    }
}
