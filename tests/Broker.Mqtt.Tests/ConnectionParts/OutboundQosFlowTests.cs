using Broker.Adapters.Mqtt.Internal.Codec;
using Broker.Adapters.Mqtt.Internal.Connections;
using Broker.Adapters.Mqtt.Internal.Delivery;
using Broker.Adapters.Mqtt.Internal.Sessions;

namespace Broker.Mqtt.Tests.ConnectionParts;

/// <summary>
/// QoS 1 and 2 deliveries to the client without a socket or JetStream: packet identifiers within the receive maximum,
/// a redelivery keeping its identifier with DUP, the QoS 2 exchange from PUBREC to PUBCOMP and its identifiers held
/// meanwhile, and what a resumed session sends again.
/// </summary>
public sealed class OutboundQosFlowTests
{
    private readonly PipeConnection connection = new();
    private readonly ControlledSessionStore store = new();

    [Fact]
    public void Identifiers_are_given_in_turn_up_to_the_limit_and_an_acknowledgement_frees_one()
    {
        var (flow, output, _) = Flow(v5: false, limit: 2);
        Assert.Equal((true, (ushort)1), Assign(flow, output, Delivery(sequence: 1)));
        Assert.Equal((true, (ushort)2), Assign(flow, output, Delivery(sequence: 2)));
        Assert.False(Assign(flow, output, Delivery(sequence: 3)).Assigned);

        flow.Acknowledged(PacketType.PubAck, [0, 1]);
        Assert.Equal((true, (ushort)3), Assign(flow, output, Delivery(sequence: 3)));
        Assert.Empty(connection.Sent(output));
    }

    [Fact]
    public void A_redelivery_still_in_flight_keeps_its_identifier_and_is_sent_as_a_duplicate()
    {
        var (flow, output, _) = Flow(v5: true, limit: 10);
        lock (output.WriteLock)
        {
            Assert.True(flow.TryAssign(Delivery(sequence: 42), out var first, out var firstDuplicate));
            Assert.False(firstDuplicate);
            Assert.True(flow.TryAssign(Delivery(sequence: 42, redelivered: true), out var again, out var duplicate));
            Assert.Equal(first, again);
            Assert.True(duplicate);
        }
    }

    [Fact]
    public void PUBREC_is_answered_with_PUBREL_and_holds_the_identifier_until_PUBCOMP()
    {
        var (flow, output, session) = Flow(v5: false, limit: 10);
        Assert.Equal((true, (ushort)1), Assign(flow, output, Delivery(sequence: 1, qos: 2)));

        flow.Acknowledged(PacketType.PubRec, [0, 1]);
        Assert.Equal([(0x62, "0001")], connection.Sent(output));
        Assert.True(session.IsReleasing(1));

        // A PUBREC sent again (the PUBREL was lost) is released again.
        flow.Acknowledged(PacketType.PubRec, [0, 1]);
        Assert.Equal([(0x62, "0001")], connection.Sent(output));

        flow.Acknowledged(PacketType.PubComp, [0, 1]);
        Assert.False(session.IsReleasing(1));
    }

    [Fact]
    public void A_PUBREC_with_an_error_reason_ends_the_exchange_without_PUBREL()
    {
        var (flow, output, session) = Flow(v5: true, limit: 10);
        Assign(flow, output, Delivery(sequence: 1, qos: 2));
        flow.Acknowledged(PacketType.PubRec, [0, 1, ReasonCode.UnspecifiedError]);
        Assert.Empty(connection.Sent(output));
        Assert.False(session.IsReleasing(1));
    }

    [Theory]
    [InlineData(true, "000892")]
    [InlineData(false, "0008")]
    public void An_unknown_PUBREC_is_released_as_nats_server_does(bool v5, string expected)
    {
        var (flow, output, _) = Flow(v5, limit: 10);
        flow.Acknowledged(PacketType.PubRec, [0, 8]);
        Assert.Equal([(0x62, expected)], connection.Sent(output));
    }

    [Fact]
    public void A_resumed_session_sends_its_PUBRELs_again()
    {
        var session = new MqttSession("client", new SessionRecord("client", [], 60, [7, 9]));
        var (_, output) = connection.Parts();
        var flow = new OutboundQosFlow(output, session, store, NoQos.Instance, v5: false, limit: 10);
        flow.ResendReleases();
        Assert.Equal([(0x62, "0007"), (0x62, "0009")], connection.Sent(output).OrderBy(packet => packet.Body, StringComparer.Ordinal).ToList());

        // Their identifiers stay taken until PUBCOMP: deliveries skip them.
        var given = new List<ushort>();
        for (ulong sequence = 1; sequence <= 8; sequence++)
        {
            given.Add(Assign(flow, output, Delivery(sequence)).PacketId);
        }

        Assert.Equal([1, 2, 3, 4, 5, 6, 8, 10], given);
        flow.Acknowledged(PacketType.PubComp, [0, 7]);
        Assert.False(session.IsReleasing(7));
        Assert.True(session.IsReleasing(9));
    }

    [Fact(Timeout = 10_000)]
    public async Task Deliveries_in_flight_are_handed_back_when_the_connection_closes()
    {
        var (flow, output, _) = Flow(v5: false, limit: 1);
        Assert.True(Assign(flow, output, Delivery(sequence: 1)).Assigned);
        Assert.False(Assign(flow, output, Delivery(sequence: 2)).Assigned);

        await flow.ReturnInflightAsync(Microsoft.Extensions.Logging.Abstractions.NullLogger.Instance);
        Assert.True(Assign(flow, output, Delivery(sequence: 2)).Assigned);
    }

    private static Inflight Delivery(ulong sequence, byte qos = 1, bool redelivered = false)
        => new($"$JS.ACK.s.c.1.{sequence}.1.0.0", "c", sequence, qos, redelivered);

    private static (bool Assigned, ushort PacketId) Assign(OutboundQosFlow flow, PacketOutput output, Inflight delivery)
    {
        lock (output.WriteLock)
        {
            var assigned = flow.TryAssign(delivery, out var packetId, out _);
            return (assigned, packetId);
        }
    }

    private (OutboundQosFlow Flow, PacketOutput Output, MqttSession Session) Flow(bool v5, int limit)
    {
        var (_, output) = connection.Parts();
        var session = new MqttSession("client");
        return (new OutboundQosFlow(output, session, store, NoQos.Instance, v5, limit), output, session);
    }

    /// <summary>No JetStream: acknowledgements to consumers are skipped.</summary>
    private sealed class NoQos : IQosSource
    {
        public static readonly NoQos Instance = new();

        public QosMessages? Qos => null;
    }
}
