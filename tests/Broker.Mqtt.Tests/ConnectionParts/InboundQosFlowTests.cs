using Broker.Adapters.Mqtt.Internal.Codec;
using Broker.Adapters.Mqtt.Internal.Delivery;
using Broker.Adapters.Mqtt.Internal.Sessions;
using Broker.TestKit;
using Microsoft.Extensions.Logging.Abstractions;

namespace Broker.Mqtt.Tests.ConnectionParts;

/// <summary>
/// The client's QoS 1 and 2 publishes without a socket: acknowledgements in publish order, each after its store,
/// negative ones in MQTT 5 and a close in 3.1.1 when a store fails, and the QoS 2 exchange from PUBLISH to PUBCOMP
/// (method B for a clean session, a persistent one's publish held in the store until PUBREL: method A).
/// </summary>
public sealed class InboundQosFlowTests
{
    private readonly PipeConnection connection = new();
    private readonly ControlledSessionStore store = new();

    [Fact]
    public void A_QoS_1_publish_with_nothing_waiting_is_acknowledged_at_once()
    {
        var (flow, output, _) = Flow(v5: false);
        flow.Published(1, 7, stored: null);
        Assert.Equal([(0x40, "0007")], connection.Sent(output));
    }

    [Fact(Timeout = 10_000)]
    public async Task Acknowledgements_wait_for_the_store_and_keep_the_order_of_the_publishes()
    {
        var (flow, output, _) = Flow(v5: false);
        var first = new TaskCompletionSource();
        flow.Published(1, 1, first.Task);
        flow.Published(1, 2, stored: null);
        Assert.Empty(connection.Sent(output));

        first.SetResult();
        var sent = new List<(byte Header, string Body)>();
        Assert.True(await Eventually.TrueAsync(() =>
        {
            sent.AddRange(connection.Sent(output));
            return sent.Count >= 2;
        }));
        Assert.Equal([(0x40, "0001"), (0x40, "0002")], sent);
    }

    [Fact]
    public void A_failed_store_is_acknowledged_with_unspecified_error_in_MQTT_5()
    {
        var (flow, output, status) = Flow(v5: true);
        flow.Published(1, 3, Task.FromException(new IOException("disk gone")));
        // With the reason string (0x1F) saying why.
        Assert.Equal([(0x40, "000380" + "22" + "1F001F" + Convert.ToHexString("the message could not be stored"u8))], connection.Sent(output));
        Assert.False(status.IsClosing);
    }

    [Fact]
    public void A_failed_store_closes_an_MQTT_3_connection_without_acknowledging()
    {
        var (flow, output, status) = Flow(v5: false);
        flow.Published(1, 3, Task.FromException(new IOException("disk gone")));
        Assert.Empty(connection.Sent(output));
        Assert.True(status.IsClosing);
        Assert.Equal("a QoS 1 or 2 message or its QoS 2 state could not be stored", status.Reason);
    }

    [Fact]
    public void A_resent_QoS_2_publish_awaiting_release_is_acknowledged_again_and_not_delivered_twice()
    {
        var (flow, output, _) = Flow(v5: false);
        Assert.True(flow.TryBegin(5, duplicate: false));
        flow.Published(2, 5, stored: null);
        Assert.False(flow.TryBegin(5, duplicate: true));
        Assert.Equal([(0x50, "0005"), (0x50, "0005")], connection.Sent(output));

        flow.Release(5);
        Assert.Equal([(0x70, "0005")], connection.Sent(output));
        Assert.True(flow.TryBegin(5, duplicate: false));
    }

    [Theory]
    [InlineData(true, "000992")]
    [InlineData(false, "0009")]
    public void PUBREL_of_an_unknown_identifier_is_answered_as_nats_server_does(bool v5, string expected)
    {
        var (flow, output, _) = Flow(v5);
        flow.Release(9);
        Assert.Equal([(0x70, expected)], connection.Sent(output));
    }

    [Fact]
    public void More_QoS_2_exchanges_than_the_receive_maximum_violate_MQTT_5()
    {
        var (flow, _, _) = Flow(v5: true, receiveMaximum: 2);
        Assert.True(flow.TryBegin(1, duplicate: false));
        Assert.True(flow.TryBegin(2, duplicate: false));
        var refused = Assert.Throws<MqttProtocolException>(() => flow.TryBegin(3, duplicate: false));
        Assert.Equal(ReasonCode.ReceiveMaximumExceeded, refused.Reason);
    }

    [Fact(Timeout = 10_000)]
    public async Task A_persistent_session_acknowledges_QoS_2_once_the_publish_is_held_and_completes_once_the_record_is_removed()
    {
        store.Immediate = false;
        var (flow, output, _) = Flow(v5: false, expiry: 60);
        Assert.True(flow.HoldsQos2);
        Assert.True(flow.TryBegin(4, duplicate: false));
        var held = HeldPublish.Create(4, v5: false, 0x04, [0, 1, (byte)'t', 0, 4, (byte)'x'], "t"u8, aliased: false);
        flow.Hold(held);
        Assert.Empty(connection.Sent(output));
        var (operation, packetId, recorded) = Assert.Single(store.Calls);
        Assert.Equal(("hold", 4), (operation, packetId));

        recorded.SetResult();
        Assert.True(await Eventually.TrueAsync(() => connection.Sent(output) is [(0x50, "0004")]));

        // A resend before PUBREL is acknowledged again and not held twice.
        Assert.False(flow.TryBegin(4, duplicate: true));
        Assert.True(await Eventually.TrueAsync(() => connection.Sent(output) is [(0x50, "0004")]));

        var delivered = new TaskCompletionSource();
        flow.Released(held, delivered.Task);
        Assert.Empty(connection.Sent(output));
        delivered.SetResult();
        Assert.True(await Eventually.TrueAsync(() => store.Calls.Count == 2));
        Assert.Equal(("release", 4), (store.Calls[1].Operation, store.Calls[1].PacketId));
        Assert.Empty(connection.Sent(output));
        store.Calls[1].Done.SetResult();
        Assert.True(await Eventually.TrueAsync(() => connection.Sent(output) is [(0x70, "0004")]));
    }

    [Fact(Timeout = 10_000)]
    public async Task A_held_publish_whose_delivery_failed_is_held_again_and_the_connection_closes()
    {
        var (flow, output, status) = Flow(v5: true, expiry: 60);
        Assert.True(flow.TryBegin(8, duplicate: false));
        var held = HeldPublish.Create(8, v5: true, 0x04, [0, 1, (byte)'t', 0, 8, 0, (byte)'x'], "t"u8, aliased: false);
        flow.Hold(held);
        Assert.True(await Eventually.TrueAsync(() => connection.Sent(output) is [(0x50, "0008")]));

        flow.Released(held, Task.FromException(new IOException("disk gone")));
        Assert.True(await Eventually.TrueAsync(() => status.IsClosing));
        Assert.Empty(connection.Sent(output));

        // PUBREL again (on the next connection of the session) finds it held.
        Assert.False(flow.TryBegin(8, duplicate: true));
    }

    [Fact]
    public void A_forbidden_QoS_2_publish_ends_its_exchange_when_asked()
    {
        var (flow, output, _) = Flow(v5: true);
        Assert.True(flow.TryBegin(6, duplicate: false));
        flow.Refused(2, 6, ReasonCode.NotAuthorized, endExchange: true);
        Assert.Equal([(0x50, "000687")], connection.Sent(output));

        // The identifier is free again: the same one starts a new exchange.
        Assert.True(flow.TryBegin(6, duplicate: false));
    }

    private (InboundQosFlow Flow, Broker.Adapters.Mqtt.Internal.Connections.PacketOutput Output, Broker.Adapters.Mqtt.Internal.Connections.ConnectionStatus Status) Flow(
        bool v5, int receiveMaximum = 100, uint expiry = 0)
    {
        var (status, output) = connection.Parts();
        var session = new MqttSession("client") { ExpiryInterval = expiry };
        return (new InboundQosFlow(output, session, store, status, NullLogger.Instance, v5, receiveMaximum), output, status);
    }
}
