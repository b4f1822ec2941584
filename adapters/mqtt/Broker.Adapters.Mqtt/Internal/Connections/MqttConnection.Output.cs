using System.Buffers;
using System.IO.Pipelines;
using Broker.Abstractions;

namespace Broker.Adapters.Mqtt.Internal.Connections;

/// <summary>
/// The output: every packet is written under one lock, by the read loop (acknowledgements) or by producers
/// (deliveries). A connection that received deliveries while an MQTT read loop processed its input is flushed once
/// when that batch ends (<see cref="FlushBatch"/>); other deliveries flush at once. Beyond max_pending bytes waiting,
/// the connection is closed as a slow consumer, as nats-server closes NATS ones.
/// </summary>
internal sealed partial class MqttConnection
{
    private readonly Lock writeLock = new();
    private readonly BatchingWriter output;
    private readonly IPendingOutputFeature? pendingOutput;
    private bool outputCompleted;

    // The stamp of the last read loop batch that listed this connection for a flush.
    private long listedInBatch;

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

        FlushOutput();
    }

    public void FlushOutput()
    {
        lock (writeLock)
        {
            if (outputCompleted || stalledFlush is { IsCompleted: false })
            {
                // A stalled flush flushes again when it completes.
                return;
            }

            output.Commit();
            var flush = output.Pipe.FlushAsync();
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
