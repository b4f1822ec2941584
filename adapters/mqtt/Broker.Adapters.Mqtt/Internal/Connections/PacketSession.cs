using System.Buffers;
using System.IO.Pipelines;
using Broker.Abstractions;
using Broker.Adapters.Mqtt.Internal.Codec;

namespace Broker.Adapters.Mqtt.Internal.Connections;

/// <summary>
/// The packets of one connection as they come: each read's packets are framed, checked against what the fixed header
/// allows and handed to <see cref="IPacketHandler"/> in order (the connection's loop reads and calls
/// <see cref="ProcessAsync"/>; on an input that parks, the loop is <see cref="Run"/>); PINGREQ is answered here. Keeps
/// what the keep alive and the CONNECT timeout are measured against. Deliveries the loop's packets cause are flushed once per batch read
/// (<see cref="FlushBatch"/>).
/// </summary>
internal sealed class PacketSession
{
    private readonly int maxPacketSize;
    private readonly PacketOutput output;
    private readonly IPacketHandler handler;
    private readonly long startedAt = Environment.TickCount64;
    private long lastInputAt = Environment.TickCount64;
    private byte[]? scratch;
    private bool connected;
    private bool minimalLengths;
    private int keepAliveSeconds;

    /// <summary>The connection's status and transport are read through <paramref name="output"/>.</summary>
    public PacketSession(int maxPacketSize, PacketOutput output, IPacketHandler handler)
    {
        this.maxPacketSize = maxPacketSize;
        this.output = output;
        this.handler = handler;
    }

    // Read through the output rather than held again: 24 B less per connection (issue 25).
    private ConnectionStatus status => output.Status;

    private TransportConnection transport => output.Status.Transport;

    private PipeReader input => output.Status.Transport.Transport.Input;

    /// <summary>Whether CONNECT was accepted: from then on any packet but CONNECT may come, and the keep alive runs.</summary>
    public bool IsConnected => connected;

    /// <summary>Whether the CONNECT packet's remaining length used more bytes than needed (refused for MQTT 5 only).</summary>
    public bool ConnectLengthNotMinimal { get; private set; }

    /// <summary>
    /// CONNECT was accepted with this keep alive (0: none). For MQTT 5, a remaining length in more bytes than needed is
    /// malformed from now on (MQTT-1.5.5-1); MQTT 3.1.1 clients keep nats-server's leniency.
    /// </summary>
    public void MarkConnected(int keepAlive, bool v5 = false)
    {
        keepAliveSeconds = keepAlive;
        minimalLengths = v5;
        connected = true;
    }

    /// <summary>Whether CONNECT is late: counted from when the session state was loaded at the earliest (<paramref name="readyAt"/>).</summary>
    public bool ConnectTimedOut(long now, long readyAt, TimeSpan timeout) => now - Math.Max(startedAt, readyAt) > (long)timeout.TotalMilliseconds;

    /// <summary>Whether nothing came for 1.5 times the keep alive (MQTT-3.1.2-24).</summary>
    public bool KeepAliveExpired(long now) => keepAliveSeconds > 0 && now - Volatile.Read(ref lastInputAt) > keepAliveSeconds * 1500L;

    // A parked read's wake (IParkingReader): one delegate for every connection.
    private static readonly Action<object?> Woken = static state => ((PacketSession)state!).Continue(woken: true);

    /// <summary>Whether the input can park its reads (<see cref="IParkingReader"/>): <see cref="Run"/> can run the loop.</summary>
    public bool CanPark => input is IParkingReader;

    /// <summary>
    /// The connection's loop on an input that parks (<see cref="CanPark"/>): reads and hands each read to
    /// <see cref="ProcessAsync"/> as the owner's async loop does, but while no input is there the connection holds
    /// nothing but the reader's wake (the same delegate for every connection), not a state machine (184 B per idle
    /// connection, issue 25). A packet whose handling waits continues in <see cref="ResumeAsync"/>. The loop's end, and
    /// what ended it, go to <see cref="IPacketHandler.LoopEnded"/>.
    /// </summary>
    public void Run() => Continue(woken: false);

    private void Continue(bool woken)
    {
        var reader = (IParkingReader)input;
        try
        {
            ReadResult result;
            if (woken)
            {
                result = reader.TakeParkedResult();
            }
            else if (status.IsClosing)
            {
                handler.LoopEnded(null);
                return;
            }
            else if (!reader.TryReadOrPark(out result, Woken, this))
            {
                return;
            }

            while (true)
            {
                if (result.IsCanceled)
                {
                    handler.Stopping.ThrowIfCancellationRequested();
                }

                var processing = ProcessAsync(result, handler.Stopping);
                if (!processing.IsCompleted)
                {
                    _ = ResumeAsync(processing);
                    return;
                }

                if (!processing.Result || status.IsClosing)
                {
                    break;
                }

                if (!reader.TryReadOrPark(out result, Woken, this))
                {
                    return;
                }
            }
        }
        catch (Exception ex)
        {
            handler.LoopEnded(ex);
            return;
        }

        handler.LoopEnded(null);
    }

    // A packet's handling waits (CONNECT, a SUBSCRIBE that creates a JetStream consumer): the loop goes on after it.
    private async Task ResumeAsync(ValueTask<bool> processing)
    {
        bool more;
        try
        {
            more = await processing.ConfigureAwait(false);
        }
        catch (Exception ex)
        {
            handler.LoopEnded(ex);
            return;
        }

        if (more)
        {
            Continue(woken: false);
        }
        else
        {
            handler.LoopEnded(null);
        }
    }

    /// <summary>The next input: waits while none has come (the connection's only wait while it is idle).</summary>
    public ValueTask<ReadResult> ReadAsync(CancellationToken cancellationToken) => input.ReadAsync(cancellationToken);

    /// <summary>
    /// Handles the packets of one read, then flushes what they caused; false when the input ended. Completes
    /// synchronously (no state machine kept) unless a packet's handling has to wait (CONNECT, a SUBSCRIBE that creates
    /// a JetStream consumer): an idle connection then holds only its owner's loop (issue 25).
    /// </summary>
    public async ValueTask<bool> ProcessAsync(ReadResult result, CancellationToken cancellationToken)
    {
        var buffer = result.Buffer;
        Volatile.Write(ref lastInputAt, Environment.TickCount64);
        FlushBatch? batch = FlushBatch.Begin();
        try
        {
            while (!status.IsClosing && TryFrame(ref buffer, out var header, out var body))
            {
                var work = DispatchAsync(header, body, cancellationToken);
                if (!work.IsCompletedSuccessfully)
                {
                    // The batch belongs to this thread; whatever continues after the await starts a new one.
                    batch.End();
                    batch = null;
                    await work.ConfigureAwait(false);
                    batch = FlushBatch.Begin();
                }
            }
        }
        finally
        {
            input.AdvanceTo(buffer.Start, buffer.End);
            batch?.End();
        }

        output.Flush();
        if (result.IsCompleted || result.IsCanceled)
        {
            status.NoteReason(result.IsCompleted ? "client closed the connection" : "closed by the server");
            return false;
        }

        return true;
    }

    /// <summary>Ends the input and gives back the buffer of packets that spanned segments (the connection is closing).</summary>
    public async ValueTask CompleteAsync()
    {
        await input.CompleteAsync().ConfigureAwait(false);
        if (scratch is not null)
        {
            ArrayPool<byte>.Shared.Return(scratch);
            scratch = null;
        }
    }

    /// <summary>
    /// Takes the next complete packet off <paramref name="buffer"/>: its fixed header byte and a contiguous body (a copy
    /// only when the packet spans segments). An oversized packet is refused as soon as its length is read.
    /// </summary>
    private bool TryFrame(ref ReadOnlySequence<byte> buffer, out byte header, out ReadOnlyMemory<byte> body)
    {
        body = default;
        if (!connected && buffer.Length >= 4 && buffer.FirstSpan.StartsWith("GET "u8) && !IsWebSocket)
        {
            throw MqttProtocolException.Protocol("MQTT clients over websocket must connect to the Websocket port, not the MQTT port");
        }

        switch (PacketFramer.TryReadHeader(buffer, out header, out var remaining, out var headerLength))
        {
            case FrameStatus.Incomplete:
                return false;
            case FrameStatus.Malformed:
                throw MqttProtocolException.Malformed("malformed variable int");
        }

        if (headerLength - 1 != PacketWriter.VariableIntSize(remaining))
        {
            if (minimalLengths)
            {
                throw MqttProtocolException.Malformed($"remaining length {remaining} not in the fewest bytes");
            }

            if (!connected)
            {
                ConnectLengthNotMinimal = true;
            }
        }

        if ((long)remaining + headerLength > maxPacketSize)
        {
            throw new MqttProtocolException(ReasonCode.PacketTooLarge, $"packet of {remaining + headerLength} bytes exceeds the maximum packet size {maxPacketSize}");
        }

        if (!connected && (header >> 4) != (int)PacketType.Connect)
        {
            throw MqttProtocolException.Protocol($"the first packet should be a CONNECT (16), got {header & 0xF0}");
        }

        if (buffer.Length < headerLength + remaining)
        {
            return false;
        }

        var packet = buffer.Slice(headerLength, remaining);
        if (packet.IsSingleSegment)
        {
            body = packet.First;
        }
        else
        {
            if (scratch is null || scratch.Length < remaining)
            {
                if (scratch is not null)
                {
                    ArrayPool<byte>.Shared.Return(scratch);
                }

                scratch = ArrayPool<byte>.Shared.Rent(remaining);
            }

            packet.CopyTo(scratch);
            body = scratch.AsMemory(0, remaining);
        }

        buffer = buffer.Slice(packet.End);
        return true;
    }

    private ValueTask DispatchAsync(byte header, ReadOnlyMemory<byte> body, CancellationToken cancellationToken)
    {
        var type = (PacketType)(header >> 4);
        var flags = (byte)(header & 0x0F);
        CheckFixedHeaderFlags(type, flags);
        switch (type)
        {
            case PacketType.Connect:
                if (connected)
                {
                    throw MqttProtocolException.Protocol("received a second CONNECT packet");
                }

                return handler.ConnectAsync(body, cancellationToken);
            case PacketType.Publish:
                handler.Publish(flags, body);
                break;
            case PacketType.PubRel:
                handler.PubRel(body.Span);
                break;
            case PacketType.PubAck or PacketType.PubRec or PacketType.PubComp:
                handler.DeliveryAck(type, body.Span);
                break;
            case PacketType.Subscribe:
                return handler.SubscribeAsync(body, cancellationToken);
            case PacketType.Unsubscribe:
                handler.Unsubscribe(body.Span);
                break;
            case PacketType.PingReq:
                if (!body.IsEmpty)
                {
                    throw MqttProtocolException.Malformed($"invalid remaining length {body.Length} for PINGREQ");
                }

                output.WritePingResp();
                break;
            case PacketType.Disconnect:
                handler.Disconnect(body.Span);
                break;
            case PacketType.Auth:
                throw MqttProtocolException.Protocol("AUTH without an authentication method");
            default:
                throw MqttProtocolException.Protocol($"received unknown packet type {(int)type}");
        }

        return ValueTask.CompletedTask;
    }

    /// <summary>The reserved flag bits of each packet type (MQTT-2.2.2-1, -2), checked as nats-server does.</summary>
    private static void CheckFixedHeaderFlags(PacketType type, byte flags)
    {
        var expected = type switch
        {
            PacketType.Publish => flags,
            PacketType.PubRel or PacketType.Subscribe or PacketType.Unsubscribe => (byte)0x02,
            _ => (byte)0,
        };
        if (flags != expected)
        {
            throw MqttProtocolException.Malformed($"invalid fixed header flags {flags:x} for packet type {(int)type << 4:x}");
        }
    }

    // The WebSocket listener's definition stays in the features of the connections it hands over.
    private bool IsWebSocket => transport.Features.Get<ListenerDefinition>() is { } listener
        && !string.Equals(listener.Protocol, MqttPlugin.ProtocolName, StringComparison.Ordinal);
}
