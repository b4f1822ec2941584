using System.Text;
using MQTTnet;
using MQTTnet.Protocol;

namespace Broker.Mqtt.Tests.Mqtt5;

/// <summary>
/// The MQTT 5 subscription options (section 3.8.3.1), against the broker and Mosquitto: No Local (MQTT-3.8.3-3), Retain
/// As Published (MQTT-3.3.1-12, -13) and Retain Handling 0, 1 and 2 (MQTT-3.3.1-9, -10, -11).
/// </summary>
public sealed class SubscriptionOptionsTests
{
    [Theory(Timeout = 60_000)]
    [MemberData(nameof(Mqtt5Target.Servers), MemberType = typeof(Mqtt5Target))]
    [Trait("Mqtt5", "[MQTT-3.8.3-3]")]
    public async Task NoLocal_MQTT_3_8_3_3_own_publishes_are_not_forwarded(Mqtt5Server kind)
    {
        await using var target = await Mqtt5Target.StartAsync(kind);
        using var client = await target.ConnectAsync("self");
        var received = new Received(client);
        await SubscribeAsync(client, f => f.WithTopic("nolocal/#").WithNoLocal(true).WithQualityOfServiceLevel(MqttQualityOfServiceLevel.AtLeastOnce));
        await SubscribeAsync(client, f => f.WithTopic("local/#"));
        using var other = await target.ConnectAsync("other");

        await client.PublishAsync("nolocal/a", "own", MqttQualityOfServiceLevel.AtLeastOnce);
        await client.PublishAsync("local/a", "own-but-wanted");
        await other.PublishAsync("nolocal/a", "theirs", MqttQualityOfServiceLevel.AtLeastOnce);

        var payloads = new[] { await received.NextAsync(), await received.NextAsync() }.Select(m => Encoding.UTF8.GetString(m.Payload)).Order().ToArray();
        Assert.Equal(["own-but-wanted", "theirs"], payloads);
        await received.NoneAsync();
    }

    [Theory(Timeout = 60_000)]
    [MemberData(nameof(Mqtt5Target.Servers), MemberType = typeof(Mqtt5Target))]
    [Trait("Mqtt5", "[MQTT-3.3.1-12]")]
    [Trait("Mqtt5", "[MQTT-3.3.1-13]")]
    public async Task RetainAsPublished_MQTT_3_3_1_12_and_13_the_retain_flag_follows_the_option(Mqtt5Server kind)
    {
        await using var target = await Mqtt5Target.StartAsync(kind);
        using var asPublished = await target.ConnectAsync("as-published");
        var kept = new Received(asPublished);
        await SubscribeAsync(asPublished, f => f.WithTopic("rap/#").WithRetainAsPublished(true));
        using var cleared = await target.ConnectAsync("cleared");
        var plain = new Received(cleared);
        await SubscribeAsync(cleared, f => f.WithTopic("rap/#").WithRetainAsPublished(false));
        using var publisher = await target.ConnectAsync("publisher");

        await publisher.PublishAsync("rap/x", "retained", retain: true);
        await publisher.PublishAsync("rap/x", "plain");

        Assert.True((await kept.NextAsync()).Retain);
        Assert.False((await kept.NextAsync()).Retain);
        Assert.False((await plain.NextAsync()).Retain);
        Assert.False((await plain.NextAsync()).Retain);
    }

    [Theory(Timeout = 60_000)]
    [MemberData(nameof(Mqtt5Target.Servers), MemberType = typeof(Mqtt5Target))]
    [Trait("Mqtt5", "[MQTT-3.3.1-9]")]
    [Trait("Mqtt5", "[MQTT-3.3.1-10]")]
    [Trait("Mqtt5", "[MQTT-3.3.1-11]")]
    public async Task RetainHandling_MQTT_3_3_1_9_to_11_retained_messages_on_subscribe(Mqtt5Server kind)
    {
        await using var target = await Mqtt5Target.StartAsync(kind);
        using var publisher = await target.ConnectAsync("publisher");
        await publisher.PublishAsync("rh/a", "kept", retain: true);
        using var client = await target.ConnectAsync("handling");
        var received = new Received(client);

        // 0: on every subscribe, a repeated one included (MQTT-3.3.1-9).
        await SubscribeAsync(client, f => f.WithTopic("rh/#").WithRetainHandling(MqttRetainHandling.SendAtSubscribe));
        Assert.True((await received.NextAsync()).Retain);
        await SubscribeAsync(client, f => f.WithTopic("rh/#").WithRetainHandling(MqttRetainHandling.SendAtSubscribe));
        Assert.True((await received.NextAsync()).Retain);

        // 1: only when the subscription is new (MQTT-3.3.1-10).
        await SubscribeAsync(client, f => f.WithTopic("rh/#").WithRetainHandling(MqttRetainHandling.SendAtSubscribeIfNewSubscriptionOnly));
        await SubscribeAsync(client, f => f.WithTopic("rh/+").WithRetainHandling(MqttRetainHandling.SendAtSubscribeIfNewSubscriptionOnly));
        var fresh = await received.NextAsync();
        Assert.True(fresh.Retain);
        await received.NoneAsync();

        // 2: never (MQTT-3.3.1-11).
        await SubscribeAsync(client, f => f.WithTopic("rh/a").WithRetainHandling(MqttRetainHandling.DoNotSendOnSubscribe));
        await received.NoneAsync();
    }

    private static async Task SubscribeAsync(IMqttClient client, Action<MqttTopicFilterBuilder> filter)
    {
        using var cts = new CancellationTokenSource(MqttBroker.Timeout);
        var result = await client.SubscribeAsync(new MqttClientSubscribeOptionsBuilder().WithTopicFilter(filter).Build(), cts.Token);
        Assert.All(result.Items, item => Assert.True((int)item.ResultCode < 0x80, item.ResultCode.ToString()));
    }
}
