using Broker.Adapters.Mqtt.Internal.Sessions;

namespace Broker.Adapters.Mqtt.Internal.Delivery;

/// <summary>
/// A QoS 1 or 2 message sent to the client and not yet acknowledged: where its JetStream acknowledgement goes (none for
/// a retained message, which is not on a consumer) and which stored message it is, so that a redelivery reuses its
/// packet identifier with DUP set (MQTT-4.3.2, -4.4.0-1).
/// </summary>
/// <param name="AckSubject">The consumer's <c>$JS.ACK...</c> reply subject, or <see langword="null"/>.</param>
/// <param name="Consumer">The consumer's name, or <see langword="null"/>.</param>
/// <param name="Sequence">The stream sequence of the message, or 0.</param>
/// <param name="Qos">The QoS it was sent with (1 or 2).</param>
/// <param name="Redelivered">Whether the consumer delivered it before (to this or an earlier connection of the session).</param>
internal readonly record struct Inflight(string? AckSubject, string? Consumer, ulong Sequence, byte Qos, bool Redelivered = false);

/// <summary>
/// The outgoing QoS 1 and 2 deliveries of one connection by packet identifier, bounded by the client's receive
/// maximum (MQTT-3.3.4-7). Identifiers of outgoing QoS 2 exchanges waiting for PUBCOMP are not reused meanwhile
/// (MQTT-2.2.1-3). Not thread-safe: the connection guards it with its write lock. Its tables are made with the first
/// QoS 1 or 2 delivery: a QoS 0 subscriber never holds them (issue 25).
/// </summary>
internal sealed class InflightDeliveries
{
    private Dictionary<ushort, Inflight>? byPacketId;
    private Dictionary<(string Consumer, ulong Sequence), ushort>? byMessage;
    private ushort last;

    public int Count => byPacketId?.Count ?? 0;

    /// <summary>
    /// Assigns the delivery a packet identifier: the one it had when it is a redelivery of a message still in flight
    /// (<paramref name="duplicate"/> then), else a free one, never one of <paramref name="session"/>'s outgoing QoS 2
    /// exchanges between PUBREC and PUBCOMP. False when <paramref name="limit"/> deliveries are in flight.
    /// </summary>
    public bool TryAdd(in Inflight delivery, int limit, MqttSession session, out ushort packetId, out bool duplicate)
    {
        duplicate = delivery.Redelivered;
        byPacketId ??= [];
        byMessage ??= [];
        if (delivery.Consumer is { } consumer && byMessage.TryGetValue((consumer, delivery.Sequence), out packetId))
        {
            byPacketId[packetId] = delivery;
            duplicate = true;
            return true;
        }

        packetId = 0;
        if (byPacketId.Count >= limit || byPacketId.Count >= ushort.MaxValue - 1)
        {
            return false;
        }

        // Packet identifiers are 1-65535; the next free one after the last given keeps them from repeating soon.
        var candidate = last;
        for (var tries = 0; tries < ushort.MaxValue; tries++)
        {
            candidate = candidate == ushort.MaxValue ? (ushort)1 : (ushort)(candidate + 1);
            if (!byPacketId.ContainsKey(candidate) && !session.IsReleasing(candidate))
            {
                last = candidate;
                packetId = candidate;
                byPacketId[candidate] = delivery;
                if (delivery.Consumer is { } name)
                {
                    byMessage[(name, delivery.Sequence)] = candidate;
                }

                return true;
            }
        }

        return false;
    }

    /// <summary>Settles a delivery the client acknowledged; false for an identifier not in flight.</summary>
    public bool TryRemove(ushort packetId, out Inflight delivery)
    {
        delivery = default;
        if (byPacketId is null || !byPacketId.Remove(packetId, out delivery))
        {
            return false;
        }

        if (delivery.Consumer is { } consumer)
        {
            byMessage!.Remove((consumer, delivery.Sequence));
        }

        return true;
    }

    /// <summary>Forgets the delivery of a stored message when it is in flight (a redelivery the broker drops).</summary>
    public void RemoveMessage(in Inflight delivery)
    {
        if (delivery.Consumer is { } consumer && byMessage is not null && byMessage.Remove((consumer, delivery.Sequence), out var packetId))
        {
            byPacketId!.Remove(packetId);
        }
    }

    /// <summary>Takes every delivery still in flight (the connection is closing).</summary>
    public List<Inflight> TakeAll()
    {
        if (byPacketId is null)
        {
            return [];
        }

        var all = new List<Inflight>(byPacketId.Values);
        byPacketId.Clear();
        byMessage!.Clear();
        return all;
    }
}
