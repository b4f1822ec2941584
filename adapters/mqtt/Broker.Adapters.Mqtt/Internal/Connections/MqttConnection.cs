using System.Buffers;
using System.IO.Pipelines;
using Broker.Abstractions;
using Broker.Adapters.Mqtt.Internal.Codec;
using Broker.Adapters.Mqtt.Internal.Sessions;
using Microsoft.Extensions.Logging;

namespace Broker.Adapters.Mqtt.Internal.Connections;

/// <summary>
/// One MQTT client connection: a read loop that frames packets and runs them in order, a bus client through which
/// the connection publishes and subscribes, and deliveries written straight into the output by the producers'
/// threads. Partial files: Connect (CONNECT/CONNACK, sessions), Publish (PUBLISH from the client), Subscribe,
/// Deliver (PUBLISH to the client), Output (write lock and flushes), Close (will, timers, teardown).
/// </summary>
internal sealed partial class MqttConnection
{
    private readonly MqttProtocolHandler handler;
    private readonly TransportConnection transport;
    private readonly MqttOptions options;
    private readonly ILogger logger;
    private readonly PipeReader input;
    private readonly long startedAt = Environment.TickCount64;
    private long lastInputAt = Environment.TickCount64;
    private byte[]? scratch;
    private string name;
    private readonly FlushBatch batch = new();

    public MqttConnection(MqttProtocolHandler handler, TransportConnection transport)
    {
        this.handler = handler;
        this.transport = transport;
        options = handler.Options;
        logger = handler.Logger;
        input = transport.Transport.Input;
        output = new BatchingWriter(transport.Transport.Output);
        pendingOutput = transport.Features.Get<IPendingOutputFeature>();
        name = transport.RemoteEndPoint?.ToString() ?? transport.ConnectionId;
    }

    /// <summary>The client id once CONNECT was accepted.</summary>
    public string? ClientId => session?.ClientId;

    public override string ToString() => name;

    public async Task RunAsync(CancellationToken cancellationToken)
    {
        try
        {
            await ReadLoopAsync(cancellationToken).ConfigureAwait(false);
        }
        catch (MqttProtocolException ex)
        {
            OnViolation(ex);
        }
        catch (OperationCanceledException) when (cancellationToken.IsCancellationRequested)
        {
            SendDisconnect(0x8B, "server shutting down");
            closeReason ??= "server shutting down";
        }
        catch (Exception ex) when (ex is IOException or InvalidOperationException or ObjectDisposedException)
        {
            closeReason ??= "read error: " + ex.Message;
        }
        finally
        {
            await CloseAsync().ConfigureAwait(false);
        }
    }

    private async Task ReadLoopAsync(CancellationToken cancellationToken)
    {
        while (!closing)
        {
            var result = await input.ReadAsync(cancellationToken).ConfigureAwait(false);
            var buffer = result.Buffer;
            Volatile.Write(ref lastInputAt, Environment.TickCount64);
            batch.Begin();
            try
            {
                while (!closing && TryFrame(ref buffer, out var header, out var body))
                {
                    var work = DispatchAsync(header, body, cancellationToken);
                    if (!work.IsCompletedSuccessfully)
                    {
                        // The batch belongs to this thread; whatever continues after the await starts a new one.
                        batch.End();
                        await work.ConfigureAwait(false);
                        batch.Begin();
                    }
                }
            }
            finally
            {
                input.AdvanceTo(buffer.Start, buffer.End);
                batch.End();
            }

            FlushOutput();
            if (result.IsCompleted || result.IsCanceled)
            {
                closeReason ??= result.IsCompleted ? "client closed the connection" : "closed by the server";
                return;
            }
        }
    }

    /// <summary>
    /// Takes the next complete packet off <paramref name="buffer"/>: its fixed header byte and a contiguous body (a copy
    /// only when the packet spans segments). An oversized packet is refused as soon as its length is read.
    /// </summary>
    private bool TryFrame(ref ReadOnlySequence<byte> buffer, out byte header, out ReadOnlyMemory<byte> body)
    {
        body = default;
        if (session is null && buffer.Length >= 4 && buffer.FirstSpan.StartsWith("GET "u8) && !IsWebSocket)
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

        if ((long)remaining + headerLength > options.MaxPacketSize)
        {
            throw new MqttProtocolException(ReasonCode.PacketTooLarge, $"packet of {remaining + headerLength} bytes exceeds the maximum packet size {options.MaxPacketSize}");
        }

        if (session is null && (header >> 4) != (int)PacketType.Connect)
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
                if (session is not null)
                {
                    throw MqttProtocolException.Protocol("received a second CONNECT packet");
                }

                return HandleConnectAsync(body, cancellationToken);
            case PacketType.Publish:
                HandlePublish(flags, body);
                break;
            case PacketType.PubRel:
                HandlePubRel(body.Span);
                break;
            case PacketType.PubAck or PacketType.PubRec or PacketType.PubComp:
                HandleDeliveryAck(type, body.Span);
                break;
            case PacketType.Subscribe:
                return HandleSubscribeAsync(body, cancellationToken);
            case PacketType.Unsubscribe:
                HandleUnsubscribe(body.Span);
                break;
            case PacketType.PingReq:
                if (!body.IsEmpty)
                {
                    throw MqttProtocolException.Malformed($"invalid remaining length {body.Length} for PINGREQ");
                }

                lock (writeLock)
                {
                    if (!outputCompleted)
                    {
                        ControlPackets.WritePingResp(output);
                    }
                }

                break;
            case PacketType.Disconnect:
                HandleDisconnect(body.Span);
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
