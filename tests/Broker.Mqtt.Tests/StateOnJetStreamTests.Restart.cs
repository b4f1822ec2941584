using Broker.TestKit;
using MQTTnet;
using MQTTnet.Formatter;
using MQTTnet.Protocol;
using NATS.Client.Core;
using NATS.Client.JetStream;

namespace Broker.Mqtt.Tests;

/// <summary>
/// State across a stop and start on the file store: retained writes still queued at the stop are written before
/// JetStream stops, and a stored session expires on its timer after a restart without its client coming back
/// (MQTT-3.1.2-23: the session ends when its expiry interval has passed since the network connection closed).
/// </summary>
public sealed partial class StateOnJetStreamTests
{
    [Fact(Timeout = 120_000)]
    public async Task Retained_writes_queued_when_the_broker_stops_are_in_the_store_after_the_restart()
    {
        const int count = 2000;
        await using (var broker = await StartAsync(fileStore: true))
        {
            using var publisher = await broker.ConnectAsync(MqttProtocolVersion.V311);
            for (var i = 0; i < count; i++)
            {
                await publisher.PublishAsync("queued/" + i, "v" + i, retain: true);
            }

            // Its PUBACK means the broker took every publish before it; their writes are queued, not all applied.
            await publisher.PublishAsync("queued/last", "end", MqttQualityOfServiceLevel.AtLeastOnce, retain: true);
        }

        await using (var broker = await StartAsync(fileStore: true))
        {
            await using var nats = new NatsConnection(new NatsOpts { Url = broker.Url });
            var js = new NatsJSContext(nats);
            Assert.Equal(count + 1, (await js.GetStreamAsync("$MQTT_rmsgs")).Info.State.Messages);
        }
    }

    [Fact(Timeout = 90_000)]
    [Trait("Mqtt5", "[MQTT-3.1.2-23]")]
    public async Task A_stored_session_expires_on_its_timer_after_a_restart_without_its_client()
    {
        await using (var broker = await StartAsync(fileStore: true))
        {
            foreach (var (clientId, expiry) in new[] { ("expires-later", 8u), ("stays", 3600u) })
            {
                using var durable = await ConnectDurableAsync(broker, MqttProtocolVersion.V500, expiry, clientId);
                await durable.Client.SubscribeAsync("timer/#", MqttQualityOfServiceLevel.AtLeastOnce);
                await durable.Client.DisconnectAsync();
            }
        }

        await using (var broker = await StartAsync(fileStore: true))
        {
            // Any MQTT client makes the account's state load; neither stored session's client comes back.
            using (var other = await broker.ConnectAsync(MqttProtocolVersion.V500, "someone-else"))
            {
                await other.DisconnectAsync();
            }

            await using var nats = new NatsConnection(new NatsOpts { Url = broker.Url });
            var js = new NatsJSContext(nats);
            await Eventually.AssertAsync(
                async () => (await js.GetStreamAsync("$MQTT_sess")).Info.State.Messages == 1
                    && (await js.GetStreamAsync("$MQTT_msgs")).Info.State.ConsumerCount == 1,
                "the expired session and its consumer purged",
                TimeSpan.FromSeconds(20));
            // Not purged at start (it had not expired then): by its timer.
            Assert.False(broker.Logs.Contains("expired while the broker was down"));

            using var stays = await ConnectDurableAsync(broker, MqttProtocolVersion.V500, 3600, "stays");
            Assert.True(stays.IsSessionPresent);
            using var expired = await ConnectDurableAsync(broker, MqttProtocolVersion.V500, 8, "expires-later");
            Assert.False(expired.IsSessionPresent);
        }
    }
}
