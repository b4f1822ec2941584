using Broker.JetStream;
using Broker.Storage.FileStore;
using Broker.TestKit;
using MQTTnet;
using MQTTnet.Formatter;
using MQTTnet.Protocol;
using NATS.Client.Core;
using NATS.Client.JetStream;
using NATS.Client.JetStream.Models;

namespace Broker.Mqtt.Tests;

/// <summary>
/// The <c>mqtt { }</c> keys that shape the subscriptions' JetStream consumers, through real clients on the file store:
/// <c>max_inflight</c> (an alias of <c>max_ack_pending</c>), <c>consumer_memory_storage</c> (<c>mem_storage</c>: the
/// consumer's state never reaches the disk) and <c>consumer_inactive_threshold</c> (JetStream deletes the durable of an
/// absent client; the session gets a new one when it comes back).
/// </summary>
public sealed class ConsumerSettingsTests : IDisposable
{
    private readonly TempDirectory storeDirectory = new("mqtt-consumers-");

    public void Dispose()
    {
        storeDirectory.Dispose();
    }

    [Theory(Timeout = 60_000)]
    [InlineData(true)]
    [InlineData(false)]
    public async Task Consumers_get_mem_storage_and_max_inflight_as_configured(bool memory)
    {
        await using var broker = await StartAsync(("consumer_memory_storage", memory ? "true" : "false"), ("max_inflight", "7"));
        using var client = await ConnectPersistentAsync(broker, "mem-" + memory);
        await client.SubscribeAsync("mem/#", MqttQualityOfServiceLevel.AtLeastOnce);

        await using var nats = new NatsConnection(new NatsOpts { Url = broker.Url });
        var info = (await SingleConsumerAsync(new NatsJSContext(nats))).Info;
        var config = info.Config;
        Assert.Equal(memory, config.MemStorage);
        Assert.Equal(7, config.MaxAckPending);
        Assert.Equal(TimeSpan.Zero, config.InactiveThreshold);

        // The file store keeps a folder per consumer for its state, except for memory-only consumers.
        var folders = Directory.GetDirectories(storeDirectory.Path, info.Name, SearchOption.AllDirectories);
        Assert.Equal(memory ? 0 : 1, folders.Length);
    }

    [Fact(Timeout = 60_000)]
    public async Task The_consumer_of_an_absent_client_is_deleted_after_the_inactive_threshold_and_made_again_on_return()
    {
        await using var broker = await StartAsync(("consumer_inactive_threshold", "500ms"));
        await using var nats = new NatsConnection(new NatsOpts { Url = broker.Url });
        var js = new NatsJSContext(nats);
        using (var first = await ConnectPersistentAsync(broker, "inactive"))
        {
            await first.SubscribeAsync("idle/#", MqttQualityOfServiceLevel.AtLeastOnce);
            var consumer = await SingleConsumerAsync(js);
            Assert.Equal(TimeSpan.FromMilliseconds(500), consumer.Info.Config.InactiveThreshold);

            // Connected, the client listens on the deliver subject: the consumer stays past its threshold (an absence,
            // so a fixed wait, three thresholds long).
            await Task.Delay(TimeSpan.FromSeconds(1.5));
            Assert.Equal(1, await CountConsumersAsync(js));
            await first.DisconnectAsync();
        }

        await Eventually.AssertAsync(async () => await CountConsumersAsync(js) == 0, "the consumer of the absent client deleted");

        using var back = await ConnectPersistentAsync(broker, "inactive");
        var received = new Received(back);
        await Eventually.AssertAsync(async () => await CountConsumersAsync(js) == 1, "a new consumer for the resumed subscription");
        using var publisher = await broker.ConnectAsync(MqttProtocolVersion.V311);
        await publisher.PublishAsync("idle/again", "after return", MqttQualityOfServiceLevel.AtLeastOnce);
        var message = await received.NextAsync();
        Assert.Equal(("idle/again", MqttQualityOfServiceLevel.AtLeastOnce), (message.Topic, message.QualityOfServiceLevel));
    }

    private Task<TestBroker> StartAsync(params (string Key, string? Value)[] settings)
        => MqttBroker.StartAsync(null, [new JetStreamPlugin(new JetStreamOptions { StoreDirectory = storeDirectory.Path }), new FileStorePlugin()], settings);

    private static async Task<IMqttClient> ConnectPersistentAsync(TestBroker broker, string clientId)
    {
        var client = new MqttClientFactory().CreateMqttClient();
        var options = new MqttClientOptionsBuilder().WithTcpServer("127.0.0.1", broker.MqttPort()).WithProtocolVersion(MqttProtocolVersion.V311)
            .WithClientId(clientId).WithCleanSession(false).WithTimeout(MqttBroker.Timeout).Build();
        using var cts = new CancellationTokenSource(MqttBroker.Timeout);
        await client.ConnectAsync(options, cts.Token);
        return client;
    }

    private static async Task<INatsJSConsumer> SingleConsumerAsync(NatsJSContext js)
    {
        var names = new List<string>();
        await foreach (var name in js.ListConsumerNamesAsync("$MQTT_msgs"))
        {
            names.Add(name);
        }

        return await js.GetConsumerAsync("$MQTT_msgs", Assert.Single(names));
    }

    private static async Task<int> CountConsumersAsync(NatsJSContext js)
    {
        var count = 0;
        await foreach (var _ in js.ListConsumerNamesAsync("$MQTT_msgs"))
        {
            count++;
        }

        return count;
    }
}
