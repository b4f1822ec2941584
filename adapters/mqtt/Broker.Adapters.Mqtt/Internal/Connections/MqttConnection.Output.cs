using System.Buffers;
using System.IO.Pipelines;
using Broker.Abstractions;

namespace Broker.Adapters.Mqtt.Internal.Connections;

/// <summary>
/// The output: every packet is written under one lock, by the read loop (acknowledgements) or by producers
/// (deliveries). A connection that received deliveries while an MQTT read loop processed its input is flushed once
/// when that batch ends (<see cref="FlushBatch"/>); other deliveries queue one flush after the producer's work item.
/// Beyond max_pending bytes waiting, the connection is closed as a slow consumer, as nats-server closes NATS ones.
/// </summary>
internal sealed partial class MqttConnection : IThreadPoolWorkItem
{
    private readonly Lock writeLock = new();
    private readonly BatchingWriter output;
    private readonly IPendingOutputFeature? pendingOutput;
    private bool outputCompleted;

    // The stamp of the last read loop batch that listed this connection for a flush.
    private long listedInBatch;

    // 1 while a flush is queued to the thread pool for deliveries made outside an MQTT read loop.
    private int flushQueued;

    // A flush the output has not completed (three quarters of max_pending are waiting); guarded by writeLock.
    private Task? stalledFlush;

    /// <summary>nats-server's close reason for a slow consumer, which the bus counts in /varz and shows in /connz.</summary>
    private const string SlowConsumerReason = "Slow Consumer (Pending Bytes)";

    private void OnDelivered()
    {
        if (pendingOutput is { } pending && pending.PendingOutputBytes > transport.Settings.MaxPendingOutputBytes)
        {
            MqttLog.SlowConsumer(logger, name, pending.PendingOutputBytes, transport.Settings.MaxPendingOutputBytes);
            closeReason ??= SlowConsumerReason;
            closing = true;
            transport.Abort(SlowConsumerReason);
            input.CancelPendingRead();
            return;
        }

        if (FlushBatch.Current is { } batch)
        {
            // Another batch may overwrite the stamp meanwhile; then this connection is flushed once more, no harm.
            if (Volatile.Read(ref listedInBatch) != batch.Stamp)
            {
                Volatile.Write(ref listedInBatch, batch.Stamp);
                batch.Add(this);
            }

            return;
        }

        // A producer that is not an MQTT read loop (a NATS connection, a plugin): flush once it is done with what it
        // is doing. Queued to the producing thread's local queue, the flush runs after the producer's current work
        // item, which for a NATS read loop is the whole batch it read: nats-server's deferred flush, approximated
        // until the bus tells adapters where a producer's batch ends.
        QueueFlush();
    }

    /// <summary>Flushes once after the current thread's work item, however many writes ask for it meanwhile.</summary>
    private void QueueFlush()
    {
        if (Interlocked.Exchange(ref flushQueued, 1) == 0)
        {
            ThreadPool.UnsafeQueueUserWorkItem(this, preferLocal: true);
        }
    }

    void IThreadPoolWorkItem.Execute()
    {
        Volatile.Write(ref flushQueued, 0);
        FlushOutput();
    }

    /// <summary>Whether a flush is queued and has not run yet (benchmarks wait for it).</summary>
    public bool FlushPending => Volatile.Read(ref flushQueued) != 0;

    public void FlushOutput()
    {
        lock (writeLock)
        {
            if (outputCompleted || stalledFlush is { IsCompleted: false })
            {
                // A stalled flush flushes again when it completes.
                return;
            }

            try
            {
                output.Commit();
                var flush = output.Pipe.FlushAsync();
                if (flush.IsCompleted)
                {
                    stalledFlush = null;
                    _ = flush.GetAwaiter().GetResult();
                    return;
                }

                stalledFlush = flush.AsTask();
            }
            catch (InvalidOperationException ex)
            {
                // The transport gave up on the output (its send loop failed or the connection was torn down meanwhile):
                // nothing more can be sent, so the connection closes instead of failing the thread that flushed.
                OutputFailed(ex.Message);
                return;
            }

            _ = stalledFlush.ContinueWith(static (_, state) => ((MqttConnection)state!).FlushOutput(), this, CancellationToken.None, TaskContinuationOptions.None, TaskScheduler.Default);
        }
    }

    /// <summary>The output cannot be used any more: closes the connection. Under writeLock.</summary>
    private void OutputFailed(string reason)
    {
        outputCompleted = true;
        closeReason ??= "write error: " + reason;
        closing = true;
        transport.Abort(closeReason);
        input.CancelPendingRead();
    }

    /// <summary>Ends the output: what is buffered is still sent, then the transport closes.</summary>
    private void CompleteOutput()
    {
        lock (writeLock)
        {
            if (outputCompleted)
            {
                return;
            }

            outputCompleted = true;
            try
            {
                output.Commit();
                output.Pipe.Complete();
            }
            catch (InvalidOperationException)
            {
            }
        }
    }
}
