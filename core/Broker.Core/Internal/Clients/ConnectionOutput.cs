using System.Buffers;
using System.IO.Pipelines;
using Broker.Abstractions;
using Broker.Core.Internal.Transport;

namespace Broker.Core.Internal.Clients;

/// <summary>
/// The output of one connection, shared by NATS connections and adapter connections (<see cref="BusConnection"/>):
/// producers on any thread append under <see cref="Gate"/>, <see cref="Flush"/> commits once per producer batch. Once
/// three quarters of max_pending or more are buffered, producers stall briefly (nats-server's fast-producer stall) on
/// the flush the pipe cannot complete, or, when the layers below the pipe hold it (a TLS or WebSocket buffer above the
/// socket's, each pausing at three quarters of its own), on the layers' drain to half (the pipe's own thresholds);
/// beyond max_pending the owner closes the connection as a slow consumer.
/// </summary>
/// <remarks>
/// Writes go to a head memory taken from the pipe and are passed to it with one <c>Advance</c> per segment or flush
/// rather than one per frame: the pipe takes its own lock in <c>Advance</c>, which producers and the send loop
/// contended for on every message. As an <see cref="IBufferWriter{T}"/> it is what adapters' encoders write to.
/// Every member except <see cref="Flush"/> and <see cref="IsBeyondMaxPending"/> must be called with <see cref="Gate"/> held.
/// </remarks>
internal sealed partial class ConnectionOutput : IBufferWriter<byte>
{
    // The most bytes of one producer batch that the producer sends itself (SendLoopScheduler): a request, a reply,
    // a few small messages; one flush of more goes to a worker.
    private const long InlineSendBytes = 4 * 1024;

    private readonly TransportConnection connection;
    private PipeWriter writer;

    // The flush the pipe has not completed, or the layers' drain (LayersDrain): the peer is far behind.
    private Task? stalledFlush;
    private long stalledSince;

    // The stall is the layers' drain, whose target moves up by what is appended meanwhile (RaiseLayersDrain).
    private bool stalledOnLayers;

    // While stalled: when the peer last took bytes, and how many it had taken by then (committed minus pending).
    private long progressAt;
    private long sentAtProgress;

    // Bytes passed to the pipe with Advance.
    private long committed;

    // The head memory and how much of it holds bytes not yet passed to Advance.
    private Memory<byte> head;
    private int headUsed;

    // Bytes written since the last flush, and in total (for adapters' encoders, to see whether they wrote anything).
    private long unflushedBytes;

    // What waited to be sent at the last exact look (WouldPassMaxPending), and Written then: pending can only have
    // grown by what was appended since, so most appends are judged without asking the transport.
    private long pendingAtCheck;
    private long writtenAtCheck;

    public ConnectionOutput(TransportConnection connection, PipeWriter writer)
    {
        this.connection = connection;
        this.writer = writer;
    }

    /// <summary>Guards everything below; a leaf lock (docs/locks.md), except that adapters' encoders run under it.</summary>
    public Lock Gate { get; } = new();

    /// <summary>Set once the output was completed or abandoned; nothing is written after it.</summary>
    public bool Completed { get; private set; }

    /// <summary>Bytes appended since the connection's output was created; encoders are measured by it.</summary>
    public long Written { get; private set; }

    /// <summary>Room for <paramref name="size"/> bytes at the end of the head memory; pass what was used to <see cref="Advance"/>.</summary>
    public Span<byte> Reserve(int size)
    {
        if (head.Length - headUsed < size)
        {
            CommitHead();
            head = writer.GetMemory(size);
        }

        return head.Span[headUsed..];
    }

    public Memory<byte> GetMemory(int sizeHint = 0)
    {
        var size = Math.Max(sizeHint, 1);
        if (head.Length - headUsed < size)
        {
            CommitHead();
            head = writer.GetMemory(size);
        }

        return head[headUsed..];
    }

    public Span<byte> GetSpan(int sizeHint = 0) => GetMemory(sizeHint).Span;

    public void Advance(int count)
    {
        headUsed += count;
        Written += count;
    }

    /// <summary>Appends bytes.</summary>
    public void Write(ReadOnlySpan<byte> bytes) => BuffersExtensions.Write(this, bytes);

    /// <summary>Appends a whole sequence (a large payload) segment by segment.</summary>
    public void Write(in ReadOnlySequence<byte> sequence)
    {
        foreach (var segment in sequence)
        {
            Write(segment.Span);
        }
    }

    /// <summary>
    /// Counts bytes of a delivery towards the current batch; returns whether the producer should end its batch now:
    /// it must not add more than an eighth of max_pending between flushes, nor anything while the peer is far behind
    /// and reading (<see cref="StallPolicy.Reading"/>).
    /// </summary>
    public bool AddUnflushed(long bytes)
    {
        unflushedBytes += bytes;
        if (stalledFlush is { IsCompleted: false })
        {
            // A peer that is reading paces the producer message by message. One that paused gets an eighth of
            // max_pending at a time, each followed by a stall; a stuck one the same without the stall, so that the
            // flush after each eighth finds it past max_pending soon after it gets there (Flush).
            if (SinceProgress() < (long)StallPolicy.Reading.TotalMilliseconds)
            {
                return true;
            }
        }

        return unflushedBytes > connection.Settings.MaxPendingOutputBytes / 8;
    }

    /// <summary>
    /// Sends what was appended to the peer; called once per producer batch, with <see cref="Gate"/> not held. Returns a
    /// task when the peer is far behind, for the producer to stall on; <paramref name="slowConsumer"/> is set when more
    /// than max_pending waits, and the owner must then close the connection. When the stalled flush completes,
    /// <paramref name="owner"/>'s <see cref="ClientBase.FlushOutput"/> runs again.
    /// </summary>
    public Task? Flush(ClientBase owner, out bool slowConsumer)
    {
        slowConsumer = false;
        Task? stall;
        var sendInline = false;
        var flushed = false;
        lock (Gate)
        {
            if (Completed)
            {
                return null;
            }

            if (Written == 0)
            {
                // Nothing went through this output: the writer is the adapter's alone (one that writes its own output,
                // such as MQTT's, may be flushing it right now, and a second flush would be a concurrent write).
                return null;
            }

            if (stalledFlush is { IsCompleted: false })
            {
                // Committing more waits for the outstanding flush; its continuation flushes again. Producers wait
                // for it only during the grace (StallPolicy), and count their next step from here.
                unflushedBytes = 0;
                if (stalledOnLayers)
                {
                    RaiseLayersDrain();
                }

                stall = SinceProgress() < (long)StallPolicy.Grace.TotalMilliseconds ? stalledFlush : null;
            }
            else
            {
                // A small batch of a read loop is sent by this thread once the lock is released (SendLoopScheduler), a
                // large one by a worker, so that its send overlaps this producer's next parse.
                sendInline = unflushedBytes <= InlineSendBytes && SendLoopScheduler.InBatch;
                unflushedBytes = 0;
                CommitHead();
                ValueTask<FlushResult> flush;
                if (sendInline)
                {
                    SendLoopScheduler.BeginInline();
                    try
                    {
                        flush = writer.FlushAsync();
                    }
                    finally
                    {
                        SendLoopScheduler.EndInline();
                    }
                }
                else
                {
                    flush = writer.FlushAsync();
                }

                // The pipe took it, but the layers below it may hold too much together: a stall like a flush's.
                stalledOnLayers = flush.IsCompleted;
                var waiting = stalledOnLayers ? Taken(flush) : flush.AsTask();
                if (waiting is null)
                {
                    stalledFlush = null;
                    stall = null;
                    flushed = true;
                }
                else
                {
                    // Three quarters of max_pending or more are waiting: producers stall on this until the peer catches up.
                    stall = stalledFlush = waiting;
                    stalledSince = progressAt = Environment.TickCount64;
                    sentAtProgress = Sent();
                    _ = stall.ContinueWith(static (_, state) => ((ClientBase)state!).FlushOutput(), owner, CancellationToken.None, TaskContinuationOptions.None, TaskScheduler.Default);
                }
            }
        }

        if (sendInline)
        {
            SendLoopScheduler.RunKept();
        }

        if (flushed)
        {
            return null;
        }

        if (IsBeyondMaxPending())
        {
            slowConsumer = true;
            return null;
        }

        return stall;
    }

    /// <summary>
    /// Ends the output for a graceful close: appends <paramref name="last"/> (an -ERR, or nothing), commits and completes
    /// the writer, so the transport sends what is buffered and then closes. Returns false when it was completed already.
    /// </summary>
    public bool Complete(ReadOnlySpan<byte> last)
    {
        if (Completed)
        {
            return false;
        }

        CommitHead();
        if (!last.IsEmpty)
        {
            writer.Write(last);
        }

        Completed = true;
        try
        {
            writer.Complete();
        }
        catch (InvalidOperationException)
        {
            // The transport already ended its side; there is nothing left to send.
        }

        return true;
    }

    /// <summary>
    /// Stops writing and leaves the writer to its owner (an adapter closing its bus client): what was appended is
    /// committed and flushed first, without waiting. Returns false when already done.
    /// </summary>
    public bool Detach()
    {
        if (Completed)
        {
            return false;
        }

        CommitHead();
        Completed = true;
        if (Written == 0)
        {
            // Nothing went through this output: the writer is the adapter's alone (an adapter that writes its own
            // output, such as MQTT's), which may be flushing it right now; a second flush would be a concurrent write.
            return true;
        }

        try
        {
            // Below max_pending a flush completes at once; otherwise the send loop takes it when the peer catches up.
            var flush = writer.FlushAsync();
            if (flush.IsCompleted)
            {
                _ = flush.GetAwaiter().GetResult();
            }
            else
            {
                _ = flush.AsTask();
            }
        }
        catch (InvalidOperationException)
        {
            // The adapter completed the writer itself.
        }

        return true;
    }

    /// <summary>Stops writing without completing the writer (the transport is being aborted). Returns false when already done.</summary>
    public bool Abandon()
    {
        if (Completed)
        {
            return false;
        }

        Completed = true;
        head = default;
        headUsed = 0;
        return true;
    }

    /// <summary>Switches to a new writer (TLS started after INFO); a completed output completes the new one too.</summary>
    public void Replace(PipeWriter replacement)
    {
        CommitHead();
        writer = replacement;
        if (Completed)
        {
            // Closed while the handshake ran: close the new output too so the layer below winds down.
            replacement.Complete();
        }
    }

    /// <summary>Passes the bytes written to the head memory to the pipe; before any other use of the writer.</summary>
    private void CommitHead()
    {
        if (headUsed > 0)
        {
            writer.Advance(headUsed);
            committed += headUsed;
        }

        head = default;
        headUsed = 0;
    }
}
