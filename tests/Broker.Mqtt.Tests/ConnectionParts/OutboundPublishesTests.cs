using System.Buffers;
using Broker.Abstractions;
using Broker.Adapters.Mqtt.Internal.Codec;
using Broker.Adapters.Mqtt.Internal.Connections;
using Broker.Adapters.Mqtt.Internal.Delivery;
using Broker.Adapters.Mqtt.Internal.Sessions;
using Microsoft.Extensions.Logging.Abstractions;

namespace Broker.Mqtt.Tests.ConnectionParts;

/// <summary>
/// PUBLISH to the client without a socket: the bytes of MQTT 3.1.1 and 5 deliveries, outbound topic aliases, the
/// client's maximum packet size, the receive maximum of QoS 1, and no allocation per QoS 0 delivery in steady state
/// (the budget bench/Broker.Benchmarks/allocation-budgets.json sets for the whole delivery).
/// </summary>
public sealed class OutboundPublishesTests
{
    private static readonly byte[] Subject = "sensors.kitchen"u8.ToArray();
    private readonly PipeConnection connection = new();
    private readonly ReadOnlySequence<byte> payload = new("21.5"u8.ToArray());

    [Fact]
    public void An_MQTT_3_delivery_carries_the_topic_made_from_the_subject()
    {
        var (publishes, output, _) = Publishes();
        Assert.True(publishes.SendV3(Subject, payload, retain: false));
        Assert.Equal([(0x30, "000F" + Hex("sensors/kitchen") + Hex("21.5"))], connection.Sent(output));
    }

    [Fact]
    public void An_MQTT_5_client_gets_an_alias_with_the_topic_once_then_the_alias_alone()
    {
        var (publishes, output, _) = Publishes(topicAliasMaximum: 5);
        var subscription = Subscription();
        Assert.True(publishes.SendV5(subscription, new BusMessage(Subject, default, default, payload), retainedDelivery: false));
        Assert.True(publishes.SendV5(subscription, new BusMessage(Subject, default, default, payload), retainedDelivery: false));
        Assert.Equal(
            [(0x30, "000F" + Hex("sensors/kitchen") + "03230001" + Hex("21.5")), (0x30, "0000" + "03230001" + Hex("21.5"))],
            connection.Sent(output));
    }

    [Fact]
    public void A_delivery_larger_than_the_client_accepts_is_dropped_and_its_alias_taken_back()
    {
        var (publishes, output, _) = Publishes(topicAliasMaximum: 5, maximumPacketSize: 20);
        var subscription = Subscription();
        Assert.True(publishes.SendV5(subscription, new BusMessage(Subject, default, default, new ReadOnlySequence<byte>(new byte[64])), retainedDelivery: false));
        Assert.Empty(connection.Sent(output));

        // The alias the dropped delivery would have set is given to the next one, which carries the topic.
        Assert.True(publishes.SendV5(subscription, new BusMessage("a"u8, default, default, payload), retainedDelivery: false));
        Assert.Equal([(0x30, "0001" + Hex("a") + "03230001" + Hex("21.5"))], connection.Sent(output));
    }

    [Fact]
    public void A_QoS_1_delivery_waits_when_the_client_has_as_many_in_flight_as_it_accepts()
    {
        var (publishes, output, qos) = Publishes(limit: 1);
        Assert.True(publishes.SendV3(Subject, payload, retain: false, new Inflight(null, null, 0, 1)));
        Assert.False(publishes.SendV3(Subject, payload, retain: false, new Inflight(null, null, 0, 1)));
        qos.Acknowledged(PacketType.PubAck, [0, 1]);
        Assert.True(publishes.SendV3(Subject, payload, retain: true, new Inflight(null, null, 0, 1)));
        Assert.Equal(
            [(0x32, "000F" + Hex("sensors/kitchen") + "0001" + Hex("21.5")), (0x33, "000F" + Hex("sensors/kitchen") + "0002" + Hex("21.5"))],
            connection.Sent(output));
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public void A_QoS_0_delivery_allocates_nothing_in_steady_state(bool v5)
    {
        var (publishes, _, _) = Publishes(topicAliasMaximum: 0);
        var subscription = Subscription();
        var best = long.MaxValue;
        for (var round = 0; round < 8; round++)
        {
            var before = GC.GetAllocatedBytesForCurrentThread();

            // Inside a read loop's batch, as for a publisher on another MQTT connection: one flush when it ends.
            var batch = FlushBatch.Begin();
            for (var i = 0; i < 64; i++)
            {
                if (v5)
                {
                    publishes.SendV5(subscription, new BusMessage(Subject, default, default, payload), retainedDelivery: false);
                }
                else
                {
                    publishes.SendV3(Subject, payload, retain: false);
                }
            }

            batch.End();
            connection.Drain();
            best = Math.Min(best, GC.GetAllocatedBytesForCurrentThread() - before);
        }

        Assert.Equal(0L, best);
    }

    private static string Hex(string text) => Convert.ToHexString(System.Text.Encoding.UTF8.GetBytes(text));

    private static ActiveSubscription Subscription()
        => new(new SubscriptionRecord("sensors/+", 0, false, false, 0, 0), "sensors.*", null, "sensors/+");

    private (OutboundPublishes Publishes, PacketOutput Output, OutboundQosFlow Qos) Publishes(int limit = 10, ushort topicAliasMaximum = 0, uint maximumPacketSize = 0)
    {
        var (_, output) = connection.Parts();
        var qos = new OutboundQosFlow(output, new MqttSession("client"), new ControlledSessionStore(), NoQos.Instance, v5: false, limit);
        output.SetClientLimits(maximumPacketSize, problemInformation: true);
        return (new OutboundPublishes(output, qos, topicAliasMaximum), output, qos);
    }

    private sealed class NoQos : IQosSource
    {
        public static readonly NoQos Instance = new();

        public QosMessages? Qos => null;
    }
}
