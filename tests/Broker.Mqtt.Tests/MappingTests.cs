using System.Text;
using Broker.Core;
using Broker.Core.Auth;
using Broker.TestKit;
using MQTTnet;
using MQTTnet.Formatter;
using MQTTnet.Protocol;
using NATS.Client.Core;

namespace Broker.Mqtt.Tests;

/// <summary>
/// Subject mappings for MQTT clients (nats-server maps an MQTT client's publish as any client's): a QoS 0 publish reaches
/// NATS and MQTT subscribers of the mapped subject, and a NATS publish mapped onto an MQTT subscription's subject
/// reaches it.
/// </summary>
public sealed class MappingTests
{
    private static readonly TimeSpan Wait = TimeSpan.FromSeconds(10);

    private static void Mappings(BrokerOptions options) => options.Mappings =
    [
        new MappingOptions { Source = "up.*", Destinations = [new MappingDestinationOptions { Subject = "mapped.$1" }] },
        new MappingOptions { Source = "nats.*", Destinations = [new MappingDestinationOptions { Subject = "down.$1" }] },
    ];

    [Fact(Timeout = 60_000)]
    public async Task An_mqtt_publish_is_mapped_and_a_mapped_nats_publish_reaches_mqtt()
    {
        await using var broker = await MqttBroker.StartAsync(Mappings);
        using var device = await broker.ConnectAsync(MqttProtocolVersion.V311, "meter-1");
        var received = new Received(device);
        await device.SubscribeAsync("mapped/#");
        await device.SubscribeAsync("down/#");

        await using var nats = new NatsConnection(new NatsOpts { Url = broker.Url });
        await using var natsSub = await nats.SubscribeCoreAsync<string>(">");
        await nats.PingAsync();

        await device.PublishAsync("up/reading", "21", MqttQualityOfServiceLevel.AtMostOnce);
        using (var timeout = new CancellationTokenSource(Wait))
        {
            Assert.Equal("mapped.reading", (await natsSub.Msgs.ReadAsync(timeout.Token)).Subject);
        }

        var first = await received.NextAsync();
        Assert.Equal(("mapped/reading", "21"), (first.Topic, Encoding.UTF8.GetString(first.Payload)));

        await nats.PublishAsync("nats.cmd", "go");
        var second = await received.NextAsync();
        Assert.Equal(("down/cmd", "go"), (second.Topic, Encoding.UTF8.GetString(second.Payload)));
    }
}
