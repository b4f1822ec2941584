using System.Text;
using Broker.TestKit;
using MQTTnet;
using MQTTnet.Formatter;
using MQTTnet.Protocol;
using NATS.Client.Core;
using NATS.Client.JetStream;
using static Broker.Mqtt.Tests.RawMqtt;

namespace Broker.Mqtt.Tests;

/// <summary>
/// Incoming QoS 2 publishes of a persistent session held in <c>$MQTT_qos2in</c> from PUBREC to PUBREL (method A, as
/// nats-server 2.10's <c>mqttStoreQoS2MsgOnce</c> and <c>mqttProcessPubRel</c>): delivered at PUBREL, once, across a
/// restart of the broker between the two, whether the client resends the PUBLISH (DUP) or only the PUBREL.
/// </summary>
public sealed partial class StateOnJetStreamTests
{
    [Theory(Timeout = 60_000)]
    [InlineData(4)]
    [InlineData(5)]
    public async Task A_held_qos2_publish_is_delivered_once_at_its_pubrel_across_a_restart(byte level)
    {
        // Clean session off; MQTT 5: session expiry interval (0x11) of an hour.
        byte[]? properties = level == 5 ? [0x11, 0, 0, 0x0E, 0x10] : null;
        byte[] props = level == 5 ? [0] : [];
        var publish = Packet(0x34, Str("exact"), U16(9), props, "once"u8.ToArray());
        await using (var broker = await StartAsync(fileStore: true))
        {
            await using var nats = new NatsConnection(new NatsOpts { Url = broker.Url });
            await using var before = await nats.SubscribeCoreAsync<string>("exact");
            await nats.PingAsync();
            await using var raw = await ConnectAsync(broker.MqttEndPoint());
            await raw.SendAsync(Connect("q2-durable", level, flags: 0x00, properties: properties));
            Assert.Equal(0, (await raw.ReadPacketAsync()).Body[0]);

            await raw.SendAsync(publish);
            await ExpectAckAsync(raw, 0x50, 9);
            await raw.SendAsync(Packet(0x34, Str("exact"), U16(10), props, "second"u8.ToArray()));
            await ExpectAckAsync(raw, 0x50, 10);
            await raw.SendAsync(Packet(0x34, Str("exact"), U16(11), props, "third"u8.ToArray()));
            await ExpectAckAsync(raw, 0x50, 11);
            Assert.Equal(3L, (await new NatsJSContext(nats).GetStreamAsync("$MQTT_qos2in")).Info.State.Messages);

            // Held until PUBREL: only the released one is delivered.
            await raw.SendAsync(0x62, 0x02, 0x00, 0x0B);
            await ExpectAckAsync(raw, 0x70, 11);
            Assert.Equal("third", (await before.Msgs.ReadAsync()).Data);
            Assert.False(before.Msgs.TryRead(out var early), $"delivered before its PUBREL: {early.Data}");
        }

        await using (var broker = await StartAsync(fileStore: true))
        {
            await using var nats = new NatsConnection(new NatsOpts { Url = broker.Url });
            await using var after = await nats.SubscribeCoreAsync<string>("exact");
            await nats.PingAsync();
            using var subscriber = await broker.ConnectAsync(level == 5 ? MqttProtocolVersion.V500 : MqttProtocolVersion.V311);
            var received = new Received(subscriber);
            await subscriber.SubscribeAsync("exact", MqttQualityOfServiceLevel.ExactlyOnce);

            await using var raw = await ConnectAsync(broker.MqttEndPoint());
            await raw.SendAsync(Connect("q2-durable", level, flags: 0x00, properties: properties));
            Assert.Equal(1, (await raw.ReadPacketAsync()).Body[0]); // session present

            // The resend (DUP) is acknowledged and not held again; each PUBREL delivers its held publish.
            await raw.SendAsync([(byte)(publish[0] | 0x08), .. publish[1..]]);
            await ExpectAckAsync(raw, 0x50, 9);
            await raw.SendAsync(0x62, 0x02, 0x00, 0x09);
            await ExpectAckAsync(raw, 0x70, 9);
            await raw.SendAsync(0x62, 0x02, 0x00, 0x0A);
            await ExpectAckAsync(raw, 0x70, 10);

            // Released already: a PUBREL sent again delivers nothing (MQTT 5: packet identifier not found).
            await raw.SendAsync(0x62, 0x02, 0x00, 0x0A);
            var (type, body) = await raw.ReadPacketAsync();
            Assert.Equal((0x70, (byte)(level == 5 ? 0x92 : 0)), (type, body.Length > 2 ? body[2] : (byte)0));

            // The identifier is free again: a new publish with it is delivered at its PUBREL.
            await raw.SendAsync(Packet(0x34, Str("exact"), U16(9), props, "new"u8.ToArray()));
            await ExpectAckAsync(raw, 0x50, 9);
            await raw.SendAsync(0x62, 0x02, 0x00, 0x09);
            await ExpectAckAsync(raw, 0x70, 9);

            Assert.Equal("once", (await after.Msgs.ReadAsync()).Data);
            Assert.Equal("second", (await after.Msgs.ReadAsync()).Data);
            Assert.Equal("new", (await after.Msgs.ReadAsync()).Data);
            Assert.Equal("once", Encoding.UTF8.GetString((await received.NextAsync()).Payload));
            Assert.Equal("second", Encoding.UTF8.GetString((await received.NextAsync()).Payload));
            Assert.Equal("new", Encoding.UTF8.GetString((await received.NextAsync()).Payload));
            await received.NoneAsync();
            Assert.False(after.Msgs.TryRead(out var extra), $"delivered again: {extra.Data}");
            Assert.Equal(0L, (await new NatsJSContext(nats).GetStreamAsync("$MQTT_qos2in")).Info.State.Messages);
        }
    }

    [Fact(Timeout = 60_000)]
    public async Task Qos2_identifiers_of_a_dropped_session_are_purged_and_a_clean_session_stores_none()
    {
        await using var broker = await StartAsync(fileStore: true);
        await using var nats = new NatsConnection(new NatsOpts { Url = broker.Url });
        var js = new NatsJSContext(nats);
        await using (var clean = await ConnectedAsync(broker.MqttEndPoint(), "q2-clean"))
        {
            await clean.SendAsync(Packet(0x34, Str("exact"), U16(3), "x"u8.ToArray()));
            await ExpectAckAsync(clean, 0x50, 3);
            Assert.Equal(0L, (await js.GetStreamAsync("$MQTT_qos2in")).Info.State.Messages);
        }

        await using (var durable = await ConnectAsync(broker.MqttEndPoint()))
        {
            await durable.SendAsync(Connect("q2-dropped", flags: 0x00));
            await durable.ReadPacketAsync();
            await durable.SendAsync(Packet(0x34, Str("exact"), U16(4), "y"u8.ToArray()));
            await ExpectAckAsync(durable, 0x50, 4);
            Assert.Equal(1L, (await js.GetStreamAsync("$MQTT_qos2in")).Info.State.Messages);
        }

        // A clean session of the same client id drops the stored one, its identifier included.
        await using var again = await ConnectedAsync(broker.MqttEndPoint(), "q2-dropped");
        await Eventually.AssertAsync(async () => (await js.GetStreamAsync("$MQTT_qos2in")).Info.State.Messages == 0, "the identifier to be purged");
    }

    [Fact(Timeout = 60_000)]
    [Trait("Mqtt5", "[MQTT-4.8.2-4]")]
    public async Task A_shared_qos_2_delivery_kept_for_its_member_is_completed_after_a_restart()
    {
        byte[] expiry = [0x11, 0, 0, 0x0E, 0x10];
        var subject = Broker.Adapters.Mqtt.Internal.JetStream.JetStreamSessionStore.Subject("kept-across");
        await using (var broker = await StartAsync(fileStore: true))
        {
            await using (var member = await ConnectAsync(broker.MqttEndPoint()))
            {
                await member.SendAsync(Connect("kept-across", level: 5, flags: 0x02, properties: expiry));
                await member.ReadPacketAsync();
                await member.SendAsync(Packet(0x82, U16(1), [0], Str("$share/g/across"), [2]));
                Assert.Equal(0x90, (await member.ReadPacketAsync()).Header);
                using var publisher = await broker.ConnectAsync(MqttProtocolVersion.V500);
                await publisher.PublishAsync(new MqttApplicationMessageBuilder().WithTopic("across").WithPayload("kept").WithQualityOfServiceLevel(MqttQualityOfServiceLevel.ExactlyOnce).Build());
                Assert.Equal(0x34, (await member.ReadPacketAsync()).Header);
            }

            // The connection closed before PUBREC: the delivery is kept in the session record.
            await using var nats = new NatsConnection(new NatsOpts { Url = broker.Url });
            var js = new NatsJSContext(nats);
            await Eventually.AssertAsync(
                async () =>
                {
                    var record = await (await js.GetStreamAsync("$MQTT_sess")).GetAsync(new NATS.Client.JetStream.Models.StreamMsgGetRequest { LastBySubj = subject });
                    return Encoding.UTF8.GetString(record.Message!.Data.Span).Contains("\"Kept\":[", StringComparison.OrdinalIgnoreCase);
                },
                "the kept delivery in the session record");
        }

        await using (var broker = await StartAsync(fileStore: true))
        {
            await using var member = await ConnectAsync(broker.MqttEndPoint());
            await member.SendAsync(Connect("kept-across", level: 5, flags: 0x00, properties: expiry));
            Assert.Equal(1, (await member.ReadPacketAsync()).Body[0]); // session present
            var (type, body) = await member.ReadPacketAsync();
            Assert.Equal(0x3C, type); // QoS 2, DUP
            Assert.EndsWith("kept", Encoding.UTF8.GetString(body), StringComparison.Ordinal);
            var packetId = body.AsSpan(2 + body[1], 2).ToArray();
            await member.SendAsync([0x50, 0x02, .. packetId]);
            var (rel, relBody) = await member.ReadPacketAsync();
            Assert.Equal((0x62, Convert.ToHexString(packetId)), (rel, Convert.ToHexString(relBody[..2])));
            await member.SendAsync([0x70, 0x02, .. packetId]);
            await Assert.ThrowsAnyAsync<OperationCanceledException>(() => member.ReadPacketAsync(TimeSpan.FromSeconds(1)));
        }
    }

    private static async Task ExpectAckAsync(RawMqtt raw, byte header, ushort packetId)
    {
        var (type, body) = await raw.ReadPacketAsync();
        Assert.Equal(header, type);
        Assert.Equal(U16(packetId), body[..2]);
        Assert.Equal(0, body.Length > 2 ? body[2] : 0); // MQTT 5: reason code success
    }
}
