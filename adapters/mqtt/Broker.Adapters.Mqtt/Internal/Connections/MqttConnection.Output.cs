using System.Buffers;
using System.IO.Pipelines;
using Broker.Abstractions;

namespace Broker.Adapters.Mqtt.Internal.Connections;

/// <summary>
/// The output: every packet is written under one lock, by the read loop (acknowledgements) or by producers
/// (deliveries). The read loop flushes once per batch it read; deliveries from other producers ask for one flush on
/// the thread pool, which takes every delivery written until it runs. Beyond max_pending bytes waiting, the
/// connection is closed as a slow consumer, as nats-server closes NATS ones.
/// </summary>
internal sealed partial class MqttConnection : IThreadPoolWorkItem
{
    private readonly Lock writeLock = new();
    private readonly PipeWriter output;
    private readonly IPendingOutputFeature? pendingOutput;
    private bool outputCompleted;
    private int flushScheduled;

    // A flush the output has not completed (three quarters of max_pending are waiting); guarded by writeLock.
    private Task? stalledFlush;

    private void OnDelivered()
    {
        if (pendingOutput is { } pending && pending.PendingOutputBytes > transport.Settings.MaxPendingOutputBytes)
        {
            MqttLog.SlowConsumer(logger, name, pending.PendingOutputBytes, transport.Settings.MaxPendingOutputBytes);
            closeReason ??= "slow consumer";
            closing = true;
            transport.Abort("slow consumer");
            input.CancelPendingRead();
            return;
        }

        if (Interlocked.Exchange(ref flushScheduled, 1) == 0)
        {
            ThreadPool.UnsafeQueueUserWorkItem(this, preferLocal: false);
        }
    }

    void IThreadPoolWorkItem.Execute()
    {
        Volatile.Write(ref flushScheduled, 0);
        FlushOutput();
    }

    private void FlushOutput()
    {
        lock (writeLock)
        {
            if (outputCompleted || stalledFlush is { IsCompleted: false })
            {
                // A stalled flush flushes again when it completes.
                return;
            }

            var flush = output.FlushAsync();
            if (flush.IsCompleted)
            {
                stalledFlush = null;
                _ = flush.GetAwaiter().GetResult();
                return;
            }

            stalledFlush = flush.AsTask();
            _ = stalledFlush.ContinueWith(static (_, state) => ((MqttConnection)state!).FlushOutput(), this, CancellationToken.None, TaskContinuationOptions.None, TaskScheduler.Default);
        }
    }

    /// <summary>Copies a large payload into the output a segment at a time. Under writeLock.</summary>
    private void WriteSequence(in ReadOnlySequence<byte> sequence)
    {
        foreach (var segment in sequence)
        {
            output.Write(segment.Span);
        }
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
                output.Complete();
            }
            catch (InvalidOperationException)
            {
            }
        }
    }
}
