using System.Text;
using MQTTnet;
using MQTTnet.Protocol;

namespace Broker.Mqtt.Tests.Mqtt5;

/// <summary>
/// The MQTT 5 Message Expiry Interval (section 3.3.2.3.3), against the broker and Mosquitto: a message whose interval
/// passed while it waited is not delivered (MQTT-3.3.2-5), from a stored session's queue or as a retained message, and
/// what is delivered carries the interval less the time it waited (MQTT-3.3.2-6).
/// </summary>
public sealed class MessageExpiryTests
{
    [Theory(Timeout = 60_000)]
    [MemberData(nameof(Mqtt5Target.Servers), MemberType = typeof(Mqtt5Target))]
    [Trait("Mqtt5", "[MQTT-3.3.2-5]")]
    [Trait("Mqtt5", "[MQTT-3.3.2-6]")]
    public async Task MessageExpiry_MQTT_3_3_2_5_a_stored_session_gets_only_the_messages_still_alive(Mqtt5Server kind)
    {
        await using var target = await Mqtt5Target.StartAsync(kind);
        var subscriber = await target.ConnectAsync("stored", b => b.WithCleanStart(false).WithSessionExpiryInterval(300));
        await subscriber.SubscribeAsync("expiry/#", MqttQualityOfServiceLevel.AtLeastOnce);
        await subscriber.DisconnectAsync();
        subscriber.Dispose();

        using var publisher = await target.ConnectAsync("publisher");
        await PublishAsync(publisher, "expiry/short", "dies", 1, retain: false);
        await PublishAsync(publisher, "expiry/long", "lives", 100, retain: false);

        // The short one's second passes while the session is away.
        await Task.Delay(TimeSpan.FromSeconds(2.5));
        using var back = new MqttClientFactory().CreateMqttClient();
        var received = new Received(back);
        using (var cts = new CancellationTokenSource(MqttBroker.Timeout))
        {
            var result = await back.ConnectAsync(
                new MqttClientOptionsBuilder().WithTcpServer(target.EndPoint.Address.ToString(), target.EndPoint.Port)
                    .WithProtocolVersion(MQTTnet.Formatter.MqttProtocolVersion.V500).WithClientId("stored").WithCleanStart(false)
                    .WithSessionExpiryInterval(300).Build(),
                cts.Token);
            Assert.True(result.IsSessionPresent);
        }

        var message = await received.NextAsync();
        Assert.Equal("expiry/long", message.Topic);
        Assert.Equal("lives", Encoding.UTF8.GetString(message.Payload));
        Assert.InRange(message.MessageExpiryInterval, 90u, 98u);
        await received.NoneAsync(TimeSpan.FromSeconds(1));
    }

    [Theory(Timeout = 60_000)]
    [MemberData(nameof(Mqtt5Target.Servers), MemberType = typeof(Mqtt5Target))]
    [Trait("Mqtt5", "[MQTT-3.3.2-5]")]
    [Trait("Mqtt5", "[MQTT-3.3.2-6]")]
    public async Task MessageExpiry_MQTT_3_3_2_5_an_expired_retained_message_is_not_sent_to_new_subscribers(Mqtt5Server kind)
    {
        await using var target = await Mqtt5Target.StartAsync(kind);
        using var publisher = await target.ConnectAsync("publisher");
        await PublishAsync(publisher, "kept/short", "dies", 1, retain: true);
        await PublishAsync(publisher, "kept/long", "lives", 100, retain: true);

        await Task.Delay(TimeSpan.FromSeconds(2.5));
        using var subscriber = await target.ConnectAsync("late");
        var received = new Received(subscriber);
        await subscriber.SubscribeAsync("kept/#", MqttQualityOfServiceLevel.AtLeastOnce);

        var message = await received.NextAsync();
        Assert.Equal("kept/long", message.Topic);
        Assert.True(message.Retain);
        Assert.InRange(message.MessageExpiryInterval, 90u, 98u);
        await received.NoneAsync(TimeSpan.FromSeconds(1));
    }

    [Theory(Timeout = 60_000)]
    [MemberData(nameof(Mqtt5Target.Servers), MemberType = typeof(Mqtt5Target))]
    [Trait("Mqtt5", "[MQTT-3.3.2-6]")]
    public async Task MessageExpiry_MQTT_3_3_2_6_a_live_delivery_carries_the_interval(Mqtt5Server kind)
    {
        await using var target = await Mqtt5Target.StartAsync(kind);
        using var subscriber = await target.ConnectAsync("live");
        var received = new Received(subscriber);
        await subscriber.SubscribeAsync("live/#", MqttQualityOfServiceLevel.AtLeastOnce);
        using var publisher = await target.ConnectAsync("publisher");

        await PublishAsync(publisher, "live/a", "now", 60, retain: false);
        var message = await received.NextAsync();
        Assert.InRange(message.MessageExpiryInterval, 58u, 60u);
    }

    private static async Task PublishAsync(IMqttClient client, string topic, string payload, uint expiry, bool retain)
    {
        using var cts = new CancellationTokenSource(MqttBroker.Timeout);
        await client.PublishAsync(
            new MqttApplicationMessageBuilder().WithTopic(topic).WithPayload(payload).WithQualityOfServiceLevel(MqttQualityOfServiceLevel.AtLeastOnce)
                .WithRetainFlag(retain).WithMessageExpiryInterval(expiry).Build(),
            cts.Token);
    }
}
