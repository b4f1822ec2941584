using Broker.Abstractions;
using Broker.Adapters.Mqtt.Internal.Codec;
using Microsoft.Extensions.Logging;

namespace Broker.Adapters.Mqtt.Internal.Connections;

/// <summary>
/// The output of one connection: every packet is written under one lock, by the read loop (acknowledgements) or by
/// producers (deliveries). A connection that received deliveries while an MQTT read loop processed its input is
/// flushed once when that batch ends (<see cref="FlushBatch"/>); other deliveries queue one flush after the producer's
/// work item. Beyond max_pending bytes waiting, the connection is closed as a slow consumer, as nats-server closes
/// NATS ones.
/// </summary>
internal sealed class PacketOutput : BatchingWriter, IThreadPoolWorkItem
{
    /// <summary>nats-server's close reason for a slow consumer, which the bus counts in /varz and shows in /connz.</summary>
    public const string SlowConsumerReason = "Slow Consumer (Pending Bytes)";

    private readonly IPendingOutputFeature? pendingOutput;
    private readonly ConnectionStatus status;
    private readonly ILogger logger;
    private bool outputCompleted;

    // What an MQTT 5 client accepts in acknowledgements (SetClientLimits).
    private uint clientMaximumPacketSize;
    private bool requestProblemInformation = true;

    // The stamp of the last read loop batch that listed this output for a flush.
    private long listedInBatch;

    // 1 while a flush is queued to the thread pool for deliveries made outside an MQTT read loop.
    private int flushQueued;

    // A flush the output has not completed (three quarters of max_pending are waiting); guarded by writeLock.
    private Task? stalledFlush;

    public PacketOutput(TransportConnection transport, ConnectionStatus status, ILogger logger)
        : base(transport.Transport.Output)
    {
        this.status = status;
        this.logger = logger;
        pendingOutput = transport.Features.Get<IPendingOutputFeature>();
    }

    /// <summary>
    /// The lock every packet is written under. The connection's parts whose state goes with what is written (the
    /// deliveries in flight, the outbound topic aliases) are guarded by it too. It is the output itself (docs/locks.md's
    /// PacketOutput.writeLock): a Lock of its own was 40 B on every connection (issue 25); nothing else locks an output.
    /// </summary>
    public object WriteLock => this;

    /// <summary>The connection's status, which the parts writing here read through the output (issue 25).</summary>
    public ConnectionStatus Status => status;

    /// <summary>The connection's logger, which the parts writing here read through the output (issue 25).</summary>
    public ILogger Logger => logger;

    /// <summary>Whether nothing more can be written. Under <see cref="WriteLock"/>.</summary>
    public bool IsCompleted => outputCompleted;

    /// <summary>Where packets are written. Under <see cref="WriteLock"/>, when not <see cref="IsCompleted"/>.</summary>
    public BatchingWriter Writer => this;

    /// <summary>Whether a flush is queued and has not run yet (benchmarks wait for it).</summary>
    public bool FlushPending => Volatile.Read(ref flushQueued) != 0;

    public void WritePingResp()
    {
        lock (this)
        {
            if (!outputCompleted)
            {
                ControlPackets.WritePingResp(this);
            }
        }
    }

    /// <summary>
    /// What an MQTT 5 client accepts besides PUBLISH: its Maximum Packet Size (0: no limit) and whether it asked for
    /// reason strings (Request Problem Information). Set once at CONNECT, before any acknowledgement.
    /// </summary>
    public void SetClientLimits(uint maximumPacketSize, bool problemInformation)
    {
        clientMaximumPacketSize = maximumPacketSize;
        requestProblemInformation = problemInformation;
    }

    /// <summary>The client's Maximum Packet Size (0: no limit), which PUBLISH packets are held to as well.</summary>
    public uint ClientMaximumPacketSize => clientMaximumPacketSize;

    /// <summary>PUBACK, PUBREC, PUBREL or PUBCOMP; MQTT 5 with <paramref name="reasonString"/> when the client takes it.</summary>
    public void WriteAck(PacketType type, ushort packetId, bool v5, byte reason, string? reasonString = null)
    {
        var text = v5 ? ReasonFor(reasonString, 4) : null;
        lock (this)
        {
            if (!outputCompleted)
            {
                ControlPackets.WriteAck(this, type, packetId, v5, reason, text);
            }
        }
    }

    /// <summary>SUBACK or UNSUBACK; MQTT 5 with <paramref name="reasonString"/> when the client takes it.</summary>
    public void WriteSubAck(ushort packetId, ReadOnlySpan<byte> codes, bool v5, bool unsubscribe, string? reasonString = null)
    {
        var text = v5 ? ReasonFor(reasonString, 3 + codes.Length) : null;
        lock (this)
        {
            if (!outputCompleted)
            {
                ControlPackets.WriteSubAck(this, packetId, codes, v5, unsubscribe, text);
            }
        }
    }

    /// <summary>
    /// A reason string for an acknowledgement of <paramref name="bodyWithout"/> bytes without it, or null: not when the
    /// client set Request Problem Information to 0 (MQTT-3.1.2-29), nor when it would make the packet larger than the
    /// client's Maximum Packet Size (MQTT-3.4.2-2, MQTT-3.9.2-1).
    /// </summary>
    private byte[]? ReasonFor(string? reasonString, int bodyWithout)
    {
        if (reasonString is null || !requestProblemInformation)
        {
            return null;
        }

        var text = ControlPackets.ReasonBytes(reasonString);
        if (text is null)
        {
            return null;
        }

        var properties = 3 + text.Length;
        var size = PacketWriter.PacketSize(bodyWithout + PacketWriter.VariableIntSize(properties) + properties);
        return clientMaximumPacketSize != 0 && size > clientMaximumPacketSize ? null : text;
    }

    /// <summary>An MQTT 3.1.1 CONNACK (the first packet: the output cannot have completed yet).</summary>
    public void WriteConnAckV3(bool sessionPresent, byte returnCode)
    {
        lock (this)
        {
            ControlPackets.WriteConnAckV3(this, sessionPresent, returnCode);
        }
    }

    /// <summary>An MQTT 5 CONNACK (the first packet: the output cannot have completed yet).</summary>
    public void WriteConnAckV5(bool sessionPresent, byte reason, ConnAckProperties properties)
    {
        lock (this)
        {
            ControlPackets.WriteConnAckV5(this, sessionPresent, reason, properties);
        }
    }

    /// <summary>An MQTT 5 DISCONNECT from the server.</summary>
    public void WriteDisconnect(byte reason, string? reasonString, uint maximumPacketSize)
    {
        lock (this)
        {
            if (!outputCompleted)
            {
                ControlPackets.WriteDisconnect(this, reason, reasonString, maximumPacketSize);
            }
        }
    }

    /// <summary>After a delivery was written: closes a slow consumer, else lists the output for its flush.</summary>
    public void OnDelivered()
    {
        if (pendingOutput is { } pending && pending.PendingOutputBytes > status.Transport.Settings.MaxPendingOutputBytes)
        {
            MqttLog.SlowConsumer(logger, status.Name, pending.PendingOutputBytes, status.Transport.Settings.MaxPendingOutputBytes);
            status.Close(SlowConsumerReason);
            status.Transport.Abort(SlowConsumerReason);
            status.WakeReader();
            return;
        }

        if (FlushBatch.Current is { } batch)
        {
            // Another batch may overwrite the stamp meanwhile; then this output is flushed once more, no harm.
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
    public void QueueFlush()
    {
        if (Interlocked.Exchange(ref flushQueued, 1) == 0)
        {
            ThreadPool.UnsafeQueueUserWorkItem(this, preferLocal: true);
        }
    }

    void IThreadPoolWorkItem.Execute()
    {
        Volatile.Write(ref flushQueued, 0);
        Flush();
    }

    public void Flush()
    {
        lock (this)
        {
            if (outputCompleted || stalledFlush is { IsCompleted: false })
            {
                // A stalled flush flushes again when it completes.
                return;
            }

            try
            {
                Commit();
                var flush = Pipe.FlushAsync();
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
                Failed(ex.Message);
                return;
            }

            _ = stalledFlush.ContinueWith(static (_, state) => ((PacketOutput)state!).Flush(), this, CancellationToken.None, TaskContinuationOptions.None, TaskScheduler.Default);
        }
    }

    /// <summary>Ends the output: what is buffered is still sent, then the transport closes.</summary>
    public void Complete()
    {
        lock (this)
        {
            if (outputCompleted)
            {
                return;
            }

            outputCompleted = true;
            try
            {
                Commit();
                Pipe.Complete();
            }
            catch (InvalidOperationException)
            {
            }
        }
    }

    /// <summary>The output cannot be used any more: closes the connection. Under writeLock.</summary>
    private void Failed(string reason)
    {
        outputCompleted = true;
        status.Close("write error: " + reason);
        status.Transport.Abort(status.Reason!);
        status.WakeReader();
    }
}
