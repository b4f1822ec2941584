using System.Text;
using Broker.TestKit;
using MQTTnet;
using MQTTnet.Protocol;
using NATS.Client.JetStream;
using static Broker.Mqtt.Tests.RawMqtt;

namespace Broker.Mqtt.Tests.Mqtt5;

/// <summary>
/// MQTT 5 limits and errors, against the broker and Mosquitto: Maximum Packet Size both ways (MQTT-3.2.2-15 with
/// DISCONNECT 0x95; MQTT-3.1.2-24 and -25: a message too large for a client is dropped for it as if sent), Receive
/// Maximum both ways (MQTT-3.3.4-7 with DISCONNECT 0x93; MQTT-3.3.4-9), and variable byte integers in the fewest bytes
/// (MQTT-1.5.5-1, DISCONNECT 0x81).
/// </summary>
public sealed class LimitsTests
{
    [Theory(Timeout = 60_000)]
    [MemberData(nameof(Mqtt5Target.Servers), MemberType = typeof(Mqtt5Target))]
    [Trait("Mqtt5", "[MQTT-3.2.2-15]")]
    public async Task MaximumPacketSize_MQTT_3_2_2_15_a_larger_packet_from_the_client_gets_0x95(Mqtt5Server kind)
    {
        await using var target = await Mqtt5Target.StartAsync(kind, [("max_packet_size", "1000")], ["max_packet_size 1000"]);
        await using var raw = await RawMqtt.ConnectAsync(target.EndPoint);
        await raw.SendAsync(Connect("large", level: 5));
        var (header, connack) = await raw.ReadPacketAsync();
        Assert.Equal(0x20, header);
        Assert.Equal(1000, Mqtt5Properties.Find(connack.AsSpan(2), 0x27));

        await raw.SendAsync(Packet(0x30, Str("big"), [0], new byte[1000]));
        var (disconnect, body) = await raw.ReadPacketAsync();
        Assert.Equal(0xE0, disconnect);
        Assert.Equal(0x95, body[0]);
        Assert.True(await raw.ClosedAsync());
    }

    [Theory(Timeout = 60_000)]
    [MemberData(nameof(Mqtt5Target.Servers), MemberType = typeof(Mqtt5Target))]
    [Trait("Mqtt5", "[MQTT-3.1.2-24]")]
    [Trait("Mqtt5", "[MQTT-3.1.2-25]")]
    public async Task MaximumPacketSize_MQTT_3_1_2_25_a_message_too_large_for_the_client_is_dropped_as_if_sent(Mqtt5Server kind)
    {
        await using var target = await Mqtt5Target.StartAsync(kind);
        var small = await target.ConnectAsync("small", b => b.WithMaximumPacketSize(200).WithCleanStart(false).WithSessionExpiryInterval(300));
        var received = new Received(small);
        await small.SubscribeAsync("sized/#", MqttQualityOfServiceLevel.AtLeastOnce);
        using var publisher = await target.ConnectAsync("publisher");

        await publisher.PublishAsync("sized/a", new string('x', 400), MqttQualityOfServiceLevel.AtLeastOnce);
        await publisher.PublishAsync("sized/a", "fits", MqttQualityOfServiceLevel.AtLeastOnce);
        Assert.Equal("fits", Encoding.UTF8.GetString((await received.NextAsync()).Payload));

        // As if sent: acknowledged to the subscription's consumer (ours keeps QoS 1 deliveries on JetStream), like the
        // message sent after it once its PUBACK is in; waiting for that also keeps a PUBACK still on its way at the
        // disconnect from bringing "fits" back below.
        if (target.Broker is { } broker)
        {
            await using var nats = await NatsClients.ConnectAsync(broker.Url, "ack-check");
            var js = new NatsJSContext(nats);
            await Eventually.AssertAsync(() => AllAcknowledgedAsync(js), "the subscription's consumer has acknowledged both messages");
        }

        // Not kept for the session either, so a reconnect does not bring it (or anything) back.
        await small.DisconnectAsync();
        small.Dispose();
        using var back = await target.ConnectAsync("small", b => b.WithMaximumPacketSize(200).WithCleanStart(false).WithSessionExpiryInterval(300));
        var again = new Received(back);
        await again.NoneAsync(TimeSpan.FromSeconds(1));
    }

    /// <summary>Mosquitto 2.0.11 answers the extra QoS 2 publish with PUBREC 0x97 (quota exceeded) and stays connected (checked).</summary>
    [Theory(Timeout = 60_000)]
    [InlineData(Mqtt5Server.Broker)]
    [Trait("Mqtt5", "[MQTT-3.3.4-7]")]
    public async Task ReceiveMaximum_MQTT_3_3_4_7_a_client_beyond_the_servers_receive_maximum_gets_0x93(Mqtt5Server kind)
    {
        await using var target = await Mqtt5Target.StartAsync(kind, [("receive_maximum", "2")], ["max_inflight_messages 2"]);
        await using var raw = await target.RawAsync("flood");
        for (var id = 1; id <= 3; id++)
        {
            await raw.SendAsync(Packet(0x34, Str("q"), U16(id), [0], "x"u8.ToArray()));
        }

        (byte Header, byte[] Body) packet;
        do
        {
            packet = await raw.ReadPacketAsync();
        }
        while (packet.Header == 0x50);
        Assert.Equal(0xE0, packet.Header);
        Assert.Equal(0x93, packet.Body[0]);
    }

    /// <summary>Mosquitto 2.0.11 sends a third unacknowledged QoS 1 PUBLISH here when the publishes come one at a time (checked).</summary>
    [Theory(Timeout = 60_000)]
    [InlineData(Mqtt5Server.Broker)]
    [Trait("Mqtt5", "[MQTT-3.3.4-9]")]
    public async Task ReceiveMaximum_MQTT_3_3_4_9_the_server_sends_no_more_unacknowledged_than_the_client_accepts(Mqtt5Server kind)
    {
        await using var target = await Mqtt5Target.StartAsync(kind);

        // CONNECT with Receive Maximum 2 (0x21).
        await using var raw = await target.RawAsync("slow", [0x21, 0, 2]);
        await raw.SendAsync(Packet(0x82, U16(1), [0], Str("rm/#"), [1]));
        Assert.Equal(0x90, (await raw.ReadPacketAsync()).Header);
        using var publisher = await target.ConnectAsync("publisher");
        for (var i = 0; i < 4; i++)
        {
            await publisher.PublishAsync("rm/a", "m" + i, MqttQualityOfServiceLevel.AtLeastOnce);
        }

        var first = await raw.ReadPacketAsync();
        var second = await raw.ReadPacketAsync();
        Assert.Equal(0x32, first.Header & 0xF6);
        Assert.Equal(0x32, second.Header & 0xF6);
        await NothingMoreAsync(raw);

        // One PUBACK frees one place: one more comes.
        await raw.SendAsync(Packet(0x40, PacketIdOf(first.Body)));
        Assert.Equal(0x32, (await raw.ReadPacketAsync()).Header & 0xF6);
        await NothingMoreAsync(raw);
    }

    [Theory(Timeout = 60_000)]
    [MemberData(nameof(Mqtt5Target.Servers), MemberType = typeof(Mqtt5Target))]
    [Trait("Mqtt5", "[MQTT-1.5.5-1]")]
    public async Task VariableByteInteger_MQTT_1_5_5_1_a_property_length_in_more_bytes_than_needed_is_malformed(Mqtt5Server kind)
    {
        await using var target = await Mqtt5Target.StartAsync(kind);
        await using var raw = await target.RawAsync("long-zero");

        // A QoS 0 PUBLISH whose property length 0 takes two bytes (0x80 0x00).
        await raw.SendAsync(Packet(0x30, Str("t"), [0x80, 0x00], "x"u8.ToArray()));
        var (header, body) = await raw.ReadPacketAsync();
        Assert.Equal(0xE0, header);
        Assert.Equal(0x81, body[0]);
        Assert.True(await raw.ClosedAsync());
    }

    /// <summary>Mosquitto 2.0.11 takes a remaining length in more bytes than needed (checked); it refuses such property lengths.</summary>
    [Theory(Timeout = 60_000)]
    [InlineData(Mqtt5Server.Broker)]
    [Trait("Mqtt5", "[MQTT-1.5.5-1]")]
    public async Task VariableByteInteger_MQTT_1_5_5_1_a_remaining_length_in_more_bytes_than_needed_is_malformed(Mqtt5Server kind)
    {
        await using var target = await Mqtt5Target.StartAsync(kind);
        await using var raw = await target.RawAsync("long-length");

        // PINGREQ with remaining length 0 in two bytes.
        await raw.SendAsync(0xC0, 0x80, 0x00);
        Assert.True(await raw.ClosedAsync());
        Assert.DoesNotContain((byte)0xD0, raw.Unread);
    }

    /// <summary>MQTT 3.1.1 keeps nats-server 2.9.10's leniency (its <c>readPacketLen</c> takes any encoding).</summary>
    [Fact(Timeout = 60_000)]
    public async Task VariableByteInteger_an_mqtt_311_remaining_length_in_more_bytes_is_read_as_nats_server_reads_it()
    {
        await using var target = await Mqtt5Target.StartAsync(Mqtt5Server.Broker);
        await using var raw = await RawMqtt.ConnectedAsync(target.EndPoint, "lenient");
        await raw.SendAsync(0xC0, 0x80, 0x00);
        Assert.Equal(0xD0, (await raw.ReadPacketAsync()).Header);
    }

    private static async Task NothingMoreAsync(RawMqtt raw)
    {
        try
        {
            var (header, body) = await raw.ReadPacketAsync(TimeSpan.FromSeconds(1));
            Assert.Fail($"unexpected packet {header:x2} {Convert.ToHexString(body)}");
        }
        catch (OperationCanceledException)
        {
        }
    }

    private static byte[] PacketIdOf(byte[] publishBody)
    {
        var topicLength = (publishBody[0] << 8) | publishBody[1];
        return publishBody[(2 + topicLength)..(4 + topicLength)];
    }

    private static async Task<bool> AllAcknowledgedAsync(NatsJSContext js)
    {
        var any = false;
        await foreach (var consumer in js.ListConsumersAsync("$MQTT_msgs"))
        {
            any = true;
            if (consumer.Info.NumAckPending > 0 || consumer.Info.NumPending > 0)
            {
                return false;
            }
        }

        return any;
    }
}
