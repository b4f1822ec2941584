using MQTTnet;
using MQTTnet.Protocol;

namespace Broker.Mqtt.Tests.Mqtt5;

/// <summary>
/// Reason strings on refusals (MQTT 5 section 3.4.2.2.2 and its kin): a refused subscription's SUBACK and a refused
/// publish's PUBACK say why, unless the client asked for no problem information (MQTT-3.1.2-29) or the string would
/// make the packet larger than the client accepts (MQTT-3.4.2-2, MQTT-3.9.2-1). Broker only: Mosquitto 2.0.11 sends
/// no reason strings on these.
/// </summary>
public sealed class ReasonStringTests
{
    [Fact(Timeout = 60_000)]
    [Trait("Mqtt5", "[MQTT-3.9.2-1]")]
    public async Task ReasonString_MQTT_3_9_2_1_a_refused_subscription_says_why()
    {
        await using var target = await Mqtt5Target.StartAsync(Mqtt5Server.Broker);
        using var client = await target.ConnectAsync("subscriber");
        var result = await SubscribeAsync(client, "$MQTT/sess/x");
        Assert.Equal(MqttClientSubscribeResultCode.NotAuthorized, Assert.Single(result.Items).ResultCode);
        Assert.Equal("\"$MQTT/sess/x\": reserved for the broker", result.ReasonString);
    }

    [Fact(Timeout = 60_000)]
    [Trait("Mqtt5", "[MQTT-3.4.2-2]")]
    public async Task ReasonString_MQTT_3_4_2_2_a_refused_publish_says_why()
    {
        await using var target = await Mqtt5Target.StartAsync(Mqtt5Server.Broker);
        using var client = await target.ConnectAsync("publisher");
        using var cts = new CancellationTokenSource(MqttBroker.Timeout);
        var result = await client.PublishAsync(new MqttApplicationMessageBuilder().WithTopic("has space").WithPayload("x").WithQualityOfServiceLevel(MqttQualityOfServiceLevel.AtLeastOnce).Build(), cts.Token);
        Assert.Equal(MqttClientPublishReasonCode.TopicNameInvalid, result.ReasonCode);
        Assert.Equal("character not supported for MQTT topics: \"has space\"", result.ReasonString);
    }

    [Fact(Timeout = 60_000)]
    [Trait("Mqtt5", "[MQTT-3.1.2-29]")]
    public async Task ReasonString_MQTT_3_1_2_29_none_when_the_client_asks_for_no_problem_information()
    {
        await using var target = await Mqtt5Target.StartAsync(Mqtt5Server.Broker);
        using var client = await target.ConnectAsync("quiet", b => b.WithRequestProblemInformation(false));
        var result = await SubscribeAsync(client, "$MQTT/sess/x");
        Assert.Equal(MqttClientSubscribeResultCode.NotAuthorized, Assert.Single(result.Items).ResultCode);
        Assert.True(string.IsNullOrEmpty(result.ReasonString), result.ReasonString);
    }

    [Fact(Timeout = 60_000)]
    [Trait("Mqtt5", "[MQTT-3.9.2-1]")]
    public async Task ReasonString_MQTT_3_9_2_1_none_when_it_would_exceed_the_clients_maximum_packet_size()
    {
        await using var target = await Mqtt5Target.StartAsync(Mqtt5Server.Broker);
        using var client = await target.ConnectAsync("small", b => b.WithMaximumPacketSize(24));
        var result = await SubscribeAsync(client, "$MQTT/sess/x");
        Assert.Equal(MqttClientSubscribeResultCode.NotAuthorized, Assert.Single(result.Items).ResultCode);
        Assert.True(string.IsNullOrEmpty(result.ReasonString), result.ReasonString);
    }

    private static async Task<MqttClientSubscribeResult> SubscribeAsync(IMqttClient client, string filter)
    {
        using var cts = new CancellationTokenSource(MqttBroker.Timeout);
        return await client.SubscribeAsync(new MqttClientSubscribeOptionsBuilder().WithTopicFilter(f => f.WithTopic(filter)).Build(), cts.Token);
    }
}
