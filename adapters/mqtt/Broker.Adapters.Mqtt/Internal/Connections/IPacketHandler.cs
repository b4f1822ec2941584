using Broker.Adapters.Mqtt.Internal.Codec;

namespace Broker.Adapters.Mqtt.Internal.Connections;

/// <summary>
/// What <see cref="PacketSession"/> hands the packets it framed to, one at a time and in order: the connection, which
/// passes each to the part that holds its state. A body is valid only during the call.
/// </summary>
internal interface IPacketHandler
{
    /// <summary>CONNECT: the session, CONNACK, the restored subscriptions.</summary>
    ValueTask ConnectAsync(ReadOnlyMemory<byte> body, CancellationToken cancellationToken);

    /// <summary>PUBLISH from the client.</summary>
    void Publish(byte flags, ReadOnlyMemory<byte> body);

    /// <summary>PUBREL: the client releases one of its QoS 2 publishes.</summary>
    void PubRel(ReadOnlySpan<byte> body);

    /// <summary>PUBACK, PUBREC or PUBCOMP for a delivery to the client.</summary>
    void DeliveryAck(PacketType type, ReadOnlySpan<byte> body);

    ValueTask SubscribeAsync(ReadOnlyMemory<byte> body, CancellationToken cancellationToken);

    void Unsubscribe(ReadOnlySpan<byte> body);

    void Disconnect(ReadOnlySpan<byte> body);

    /// <summary>The listener's stop token: packets' waits take it, and a read woken while it fired ends the loop.</summary>
    CancellationToken Stopping { get; }

    /// <summary>The loop <see cref="PacketSession.Run"/> runs ended: the input ended or closed (null), or what it threw.</summary>
    void LoopEnded(Exception? failure);
}
