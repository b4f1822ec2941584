using MQTTnet;
using MQTTnet.Protocol;

namespace Broker.Security.Tests;

/// <summary>MQTT helpers for the security tables.</summary>
internal static class MqttClientExtensions
{
    /// <summary>
    /// Subscribes to each filter (QoS 0) in its own SUBSCRIBE and returns the result codes. QoS 0, because nats-server
    /// also needs subscribe permission on its internal <c>$MQTT.sub.&gt;</c> for a QoS 1 subscription.
    /// </summary>
    public static async Task<List<MqttClientSubscribeResultCode>> SubscribeEachAsync(this IMqttClient client, params string[] filters)
    {
        var codes = new List<MqttClientSubscribeResultCode>();
        foreach (var filter in filters)
        {
            using var cts = new CancellationTokenSource(MqttSecurityServer.Timeout);
            var result = await client.SubscribeAsync(new MqttClientSubscribeOptionsBuilder().WithTopicFilter(f => f.WithTopic(filter).WithQualityOfServiceLevel(MqttQualityOfServiceLevel.AtMostOnce)).Build(), cts.Token);
            codes.Add(result.Items.Single().ResultCode);
        }

        return codes;
    }

    public static async Task<MqttClientPublishResult> SendAsync(this IMqttClient client, string topic, string payload, bool retain = false, MqttQualityOfServiceLevel qos = MqttQualityOfServiceLevel.AtLeastOnce)
    {
        using var cts = new CancellationTokenSource(MqttSecurityServer.Timeout);
        return await client.PublishAsync(new MqttApplicationMessageBuilder().WithTopic(topic).WithPayload(payload).WithQualityOfServiceLevel(qos).WithRetainFlag(retain).Build(), cts.Token);
    }
}
