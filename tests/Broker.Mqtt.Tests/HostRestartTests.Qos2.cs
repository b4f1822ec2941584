using System.Net;
using System.Text;
using Broker.TestKit;
using MQTTnet;
using MQTTnet.Protocol;
using NATS.Client.Core;
using NATS.Client.JetStream;
using NATS.Client.JetStream.Models;
using static Broker.Mqtt.Tests.RawMqtt;

namespace Broker.Mqtt.Tests;

/// <summary>
/// QoS 2 exactly once across killing the host (SIGKILL) and starting it again on the same store: an incoming publish
/// held between PUBREC and PUBREL (method A, as nats-server 2.10 keeps it in <c>$MQTT_qos2in</c>) is delivered once
/// when the reconnected client resends it with DUP and releases it (MQTT-4.3.3-2, MQTT-4.3.3-9 nats-server 2.9.10
/// has no QoS 2); an outgoing one not PUBREC'd is sent again with DUP (MQTT-4.4.0-1), and one PUBREC'd and not
/// PUBCOMP'd gets its PUBREL again and never a second PUBLISH (MQTT-4.3.3-4 / -4.4.0-1).
/// </summary>
public sealed partial class HostRestartTests
{
    [Theory(Timeout = 180_000)]
    [Trait("Mqtt5", "[MQTT-4.3.3-2]")]
    [InlineData(4, true)]
    [InlineData(5, true)]
    [InlineData(5, false)]
    public async Task Qos2_MQTT_4_3_3_2_a_publish_pubrecd_before_a_kill_is_delivered_once_after_the_restart(byte level, bool resendPublish)
    {
        var hostDll = HostDll();
        var store = Path.Combine(directory.FullName, "store");
        byte[]? properties = level == 5 ? [0x11, 0, 0, 0x0E, 0x10] : null;
        var publish = Packet(0x34, Str("crash/in"), U16(7), level == 5 ? [0] : [], "exactly-once"u8.ToArray());
        var (firstHost, natsPort, mqttPort) = await StartHostAsync(hostDll, store);
        await using (firstHost)
        {
            using (var durable = await ConnectAsync(mqttPort, "crash-subscriber", clean: false))
            {
                await durable.SubscribeAsync("crash/in", MqttQualityOfServiceLevel.ExactlyOnce);
                await durable.DisconnectAsync();
            }

            await using var nats = new NatsConnection(new NatsOpts { Url = $"nats://127.0.0.1:{natsPort}", ConnectTimeout = TimeSpan.FromSeconds(30) });
            await using var early = await nats.SubscribeCoreAsync<string>("crash.in");
            await nats.PingAsync();
            await using var publisher = await RawMqtt.ConnectAsync(new IPEndPoint(IPAddress.Loopback, mqttPort));
            await publisher.SendAsync(Connect("crash-publisher", level, flags: 0x00, properties: properties));
            Assert.Equal(0, (await publisher.ReadPacketAsync()).Body[0]);
            await publisher.SendAsync(publish);
            var (type, body) = await publisher.ReadPacketAsync();
            Assert.Equal((0x50, 7), (type, (body[0] << 8) | body[1]));
            Assert.False(early.Msgs.TryRead(out var before), $"delivered before PUBREL: {before.Data}");

            // PUBREC came: the held publish is in JetStream. The host is killed (SIGKILL) before the PUBREL.
        }

        (var secondHost, natsPort, mqttPort) = await StartHostAsync(hostDll, store);
        await using (secondHost)
        {
            await using var nats = new NatsConnection(new NatsOpts { Url = $"nats://127.0.0.1:{natsPort}", ConnectTimeout = TimeSpan.FromSeconds(30) });
            await using var live = await nats.SubscribeCoreAsync<string>("crash.in");
            await nats.PingAsync();
            var client = new MqttClientFactory().CreateMqttClient();
            using (client)
            {
                var received = new Received(client);
                Assert.True((await client.ConnectAsync(Options(mqttPort, "crash-subscriber", clean: false))).IsSessionPresent);

                await using var publisher = await RawMqtt.ConnectAsync(new IPEndPoint(IPAddress.Loopback, mqttPort));
                await publisher.SendAsync(Connect("crash-publisher", level, flags: 0x00, properties: properties));
                Assert.Equal(1, (await publisher.ReadPacketAsync()).Body[0]); // session present
                if (resendPublish)
                {
                    await publisher.SendAsync([(byte)(publish[0] | 0x08), .. publish[1..]]);
                    var (type, body) = await publisher.ReadPacketAsync();
                    Assert.Equal((0x50, 7), (type, (body[0] << 8) | body[1]));
                }

                await publisher.SendAsync(0x62, 0x02, 0x00, 0x07);
                var (compType, compBody) = await publisher.ReadPacketAsync();
                Assert.Equal((0x70, 7, 0), (compType, (compBody[0] << 8) | compBody[1], compBody.Length > 2 ? compBody[2] : 0));

                var message = await received.NextAsync();
                Assert.Equal(("crash/in", "exactly-once"), (message.Topic, Encoding.UTF8.GetString(message.Payload)));
                Assert.Equal("exactly-once", (await live.Msgs.ReadAsync()).Data);

                // The PUBREL sent again finds nothing held: nothing more is delivered.
                await publisher.SendAsync(0x62, 0x02, 0x00, 0x07);
                Assert.Equal(0x70, (await publisher.ReadPacketAsync()).Header);
                await received.NoneAsync();
                Assert.False(live.Msgs.TryRead(out var again), $"delivered twice: {again.Data}");
                Assert.Equal(0L, (await new NatsJSContext(nats).GetStreamAsync("$MQTT_qos2in")).Info.State.Messages);
            }
        }
    }

    [Fact(Timeout = 180_000)]
    [Trait("Mqtt5", "[MQTT-4.4.0-1]")]
    public async Task Qos2_MQTT_4_4_0_1_outgoing_publish_and_pubrel_are_sent_again_after_a_kill_never_a_second_publish()
    {
        var hostDll = HostDll();
        var store = Path.Combine(directory.FullName, "store");
        const string Settings = "ack_wait: \"1s\"";
        var subscribe = Packet(0x82, U16(1), Str("crash/out"), [2]);
        ushort packetId;
        var (host, natsPort, mqttPort) = await StartHostAsync(hostDll, store, Settings);
        await using (host)
        {
            await using var subscriber = await RawMqtt.ConnectAsync(new IPEndPoint(IPAddress.Loopback, mqttPort));
            await subscriber.SendAsync(Connect("crash-receiver", flags: 0x00));
            await subscriber.ReadPacketAsync();
            await subscriber.SendAsync(subscribe);
            Assert.Equal(0x90, (await subscriber.ReadPacketAsync()).Header);
            using (var publisher = await ConnectAsync(mqttPort, "crash-sender", clean: true))
            {
                await publisher.PublishAsync(new MqttApplicationMessageBuilder().WithTopic("crash/out").WithPayload("only-once").WithQualityOfServiceLevel(MqttQualityOfServiceLevel.ExactlyOnce).Build());
            }

            var (type, body) = await subscriber.ReadPacketAsync();
            Assert.Equal(0x34, type); // QoS 2, no DUP: not acknowledged before the kill
        }

        (host, natsPort, mqttPort) = await StartHostAsync(hostDll, store, Settings);
        await using (host)
        {
            await using var subscriber = await RawMqtt.ConnectAsync(new IPEndPoint(IPAddress.Loopback, mqttPort));
            await subscriber.SendAsync(Connect("crash-receiver", flags: 0x00));
            Assert.Equal(1, (await subscriber.ReadPacketAsync()).Body[0]); // session present
            var (type, body) = await subscriber.ReadPacketAsync();
            Assert.Equal(0x3C, type); // QoS 2 with DUP
            Assert.Equal("only-once", PayloadOf(body));
            packetId = (ushort)((body[2 + ((body[0] << 8) | body[1])] << 8) | body[3 + ((body[0] << 8) | body[1])]);
            await subscriber.SendAsync(0x50, 0x02, (byte)(packetId >> 8), (byte)packetId);
            var (relType, relBody) = await subscriber.ReadPacketAsync();
            Assert.Equal((0x62, packetId), (relType, (ushort)((relBody[0] << 8) | relBody[1])));

            // The PUBREL state is in the session record and the PUBREC acknowledged the message to its consumer: no
            // PUBCOMP before the kill.
            await using var nats = new NatsConnection(new NatsOpts { Url = $"nats://127.0.0.1:{natsPort}", ConnectTimeout = TimeSpan.FromSeconds(30) });
            var js = new NatsJSContext(nats);
            var subject = Broker.Adapters.Mqtt.Internal.JetStream.JetStreamSessionStore.Subject("crash-receiver");
            await Eventually.AssertAsync(
                async () =>
                {
                    var session = await (await js.GetStreamAsync("$MQTT_sess")).GetAsync(new StreamMsgGetRequest { LastBySubj = subject });
                    if (!Encoding.UTF8.GetString(session.Message!.Data.Span).Contains($"[{packetId}]", StringComparison.Ordinal))
                    {
                        return false;
                    }

                    await foreach (var consumer in (await js.GetStreamAsync("$MQTT_msgs")).ListConsumersAsync())
                    {
                        if (consumer.Info.NumAckPending != 0)
                        {
                            return false;
                        }
                    }

                    return true;
                },
                "the PUBREL state stored and the message acknowledged");
        }

        (host, _, mqttPort) = await StartHostAsync(hostDll, store, Settings);
        await using (host)
        {
            await using var subscriber = await RawMqtt.ConnectAsync(new IPEndPoint(IPAddress.Loopback, mqttPort));
            await subscriber.SendAsync(Connect("crash-receiver", flags: 0x00));
            Assert.Equal(1, (await subscriber.ReadPacketAsync()).Body[0]);
            var (relType, relBody) = await subscriber.ReadPacketAsync();
            Assert.Equal((0x62, packetId), (relType, (ushort)((relBody[0] << 8) | relBody[1])));
            await subscriber.SendAsync(0x70, 0x02, (byte)(packetId >> 8), (byte)packetId);

            // Past several ack waits: no second PUBLISH of the message.
            var extra = await Task.WhenAny(subscriber.ReadPacketAsync(TimeSpan.FromSeconds(4)));
            Assert.True(extra.IsFaulted || extra.IsCanceled, "a packet came after PUBCOMP: " + (extra.IsCompletedSuccessfully ? Convert.ToHexString(extra.Result.Body) : ""));
        }
    }

    private static string PayloadOf(byte[] publishBody)
    {
        var topicLength = (publishBody[0] << 8) | publishBody[1];
        return Encoding.UTF8.GetString(publishBody.AsSpan(2 + topicLength + 2));
    }
}
