using System.Text;
using System.Threading.Channels;
using Broker.JetStream;
using Broker.Storage.FileStore;
using Broker.Storage.MemStore;
using Broker.TestKit;
using MQTTnet;
using MQTTnet.Formatter;
using MQTTnet.Protocol;
using NATS.Client.Core;
using NATS.Client.JetStream;

namespace Broker.Mqtt.Tests;

/// <summary>
/// QoS 1 and 2 delivery on JetStream (<c>$MQTT_msgs</c>, one durable consumer per subscription), as nats-server does it:
/// granted QoS, delivery at the lower of the publish's and the subscription's QoS, messages kept for an offline
/// persistent session (across a restart with the file store), unacknowledged ones sent again with DUP, consumers
/// removed with their session, and messages from NATS publishers at QoS 0.
/// </summary>
public sealed class QosDeliveryTests : IDisposable
{
    public static TheoryData<MqttProtocolVersion> Versions => [MqttProtocolVersion.V311, MqttProtocolVersion.V500];

    private readonly TempDirectory storeDirectory = new("mqtt-qos-");

    public void Dispose()
    {
        storeDirectory.Dispose();
    }

    [Theory(Timeout = 60_000)]
    [MemberData(nameof(Versions))]
    public async Task Messages_arrive_at_the_lower_of_the_publish_and_subscription_qos(MqttProtocolVersion version)
    {
        await using var broker = await StartAsync(fileStore: false);
        using var subscriber = await broker.ConnectAsync(version);
        var received = new Deliveries(subscriber);
        var granted = await subscriber.SubscribeAsync(new MqttClientSubscribeOptionsBuilder()
            .WithTopicFilter(f => f.WithTopic("q1/#").WithQualityOfServiceLevel(MqttQualityOfServiceLevel.AtLeastOnce))
            .WithTopicFilter(f => f.WithTopic("q2/#").WithQualityOfServiceLevel(MqttQualityOfServiceLevel.ExactlyOnce))
            .Build());
        Assert.Equal([MqttClientSubscribeResultCode.GrantedQoS1, MqttClientSubscribeResultCode.GrantedQoS2], granted.Items.Select(i => i.ResultCode));

        using var publisher = await broker.ConnectAsync(version);
        await publisher.PublishAsync("q1/a", "one-at-two", MqttQualityOfServiceLevel.ExactlyOnce);
        await publisher.PublishAsync("q2/a", "two-at-two", MqttQualityOfServiceLevel.ExactlyOnce);
        await publisher.PublishAsync("q2/b", "two-at-one", MqttQualityOfServiceLevel.AtLeastOnce);
        await publisher.PublishAsync("q2", "two-at-zero", MqttQualityOfServiceLevel.AtMostOnce);

        var got = new[] { await received.NextAsync(), await received.NextAsync(), await received.NextAsync(), await received.NextAsync() }
            .ToDictionary(m => m.Payload, m => m.Qos);
        Assert.Equal(MqttQualityOfServiceLevel.AtLeastOnce, got["one-at-two"]);
        Assert.Equal(MqttQualityOfServiceLevel.ExactlyOnce, got["two-at-two"]);
        Assert.Equal(MqttQualityOfServiceLevel.AtLeastOnce, got["two-at-one"]);
        Assert.Equal(MqttQualityOfServiceLevel.AtMostOnce, got["two-at-zero"]);

        // A NATS publisher's message reaches a QoS 1 subscription at QoS 0 (as in nats-server), once.
        await using var nats = new NatsConnection(new NatsOpts { Url = broker.Url });
        await nats.PublishAsync("q1.from-nats", Encoding.UTF8.GetBytes("plain"));
        var plain = await received.NextAsync();
        Assert.Equal(("q1/from-nats", "plain", MqttQualityOfServiceLevel.AtMostOnce), (plain.Topic, plain.Payload, plain.Qos));
        await received.NoneAsync();
    }

    [Theory(Timeout = 60_000)]
    [MemberData(nameof(Versions))]
    public async Task An_offline_persistent_session_gets_what_was_published_meanwhile(MqttProtocolVersion version)
    {
        await using var broker = await StartAsync(fileStore: false);
        var clientId = "offline-" + Guid.NewGuid().ToString("N")[..8];
        using (var first = await ConnectPersistentAsync(broker, version, clientId))
        {
            await first.SubscribeAsync("inbox/#", MqttQualityOfServiceLevel.AtLeastOnce);
            await first.DisconnectAsync();
        }

        using (var publisher = await broker.ConnectAsync(version))
        {
            for (var i = 1; i <= 5; i++)
            {
                await publisher.PublishAsync($"inbox/{i}", $"m{i}", MqttQualityOfServiceLevel.AtLeastOnce);
            }
        }

        using var again = new MqttClientFactory().CreateMqttClient();
        var received = new Deliveries(again);
        await ConnectPersistentAsync(broker, version, clientId, again);
        var payloads = new List<string>();
        for (var i = 0; i < 5; i++)
        {
            var message = await received.NextAsync();
            Assert.Equal(MqttQualityOfServiceLevel.AtLeastOnce, message.Qos);
            payloads.Add(message.Payload);
        }

        Assert.Equal(["m1", "m2", "m3", "m4", "m5"], payloads);
        await received.NoneAsync();
    }

    [Theory(Timeout = 90_000)]
    [MemberData(nameof(Versions))]
    public async Task Acknowledged_qos1_publishes_for_an_offline_session_survive_a_restart_on_the_file_store(MqttProtocolVersion version)
    {
        var clientId = "restart-" + Guid.NewGuid().ToString("N")[..8];
        await using (var broker = await StartAsync(fileStore: true))
        {
            using (var subscriber = await ConnectPersistentAsync(broker, version, clientId))
            {
                await subscriber.SubscribeAsync("orders/#", MqttQualityOfServiceLevel.ExactlyOnce);
                await subscriber.DisconnectAsync();
            }

            using var publisher = await broker.ConnectAsync(version);
            for (var i = 1; i <= 20; i++)
            {
                // PUBACK / PUBREC come once the message is stored (on disk with the file store): the restart follows at once.
                var result = await publisher.PublishAsync(new MqttApplicationMessageBuilder().WithTopic($"orders/{i}").WithPayload($"order {i}")
                    .WithQualityOfServiceLevel(i % 2 == 0 ? MqttQualityOfServiceLevel.ExactlyOnce : MqttQualityOfServiceLevel.AtLeastOnce).Build());
                Assert.True(result.IsSuccess);
            }
        }

        await using (var broker = await StartAsync(fileStore: true))
        {
            using var again = new MqttClientFactory().CreateMqttClient();
            var received = new Deliveries(again);
            Assert.True(await ConnectPersistentAsync(broker, version, clientId, again) is not null);
            var payloads = new List<string>();
            for (var i = 0; i < 20; i++)
            {
                payloads.Add((await received.NextAsync()).Payload);
            }

            Assert.Equal(Enumerable.Range(1, 20).Select(i => $"order {i}"), payloads);
            await received.NoneAsync();
        }
    }

    [Theory(Timeout = 60_000)]
    [MemberData(nameof(Versions))]
    public async Task An_unacknowledged_delivery_is_sent_again_with_dup_when_the_session_resumes(MqttProtocolVersion version)
    {
        await using var broker = await StartAsync(fileStore: false);
        var clientId = "dup-" + Guid.NewGuid().ToString("N")[..8];
        using (var forgetful = new MqttClientFactory().CreateMqttClient())
        {
            var unacknowledged = new Deliveries(forgetful, acknowledge: false);
            await ConnectPersistentAsync(broker, version, clientId, forgetful);
            await forgetful.SubscribeAsync("jobs/#", MqttQualityOfServiceLevel.AtLeastOnce);

            using var publisher = await broker.ConnectAsync(version);
            await publisher.PublishAsync("jobs/1", "work", MqttQualityOfServiceLevel.AtLeastOnce);
            var first = await unacknowledged.NextAsync();
            Assert.False(first.Dup);

            // Gone without PUBACK.
            await forgetful.DisconnectAsync(new MqttClientDisconnectOptionsBuilder().WithReason(MqttClientDisconnectOptionsReason.NormalDisconnection).Build());
        }

        using var again = new MqttClientFactory().CreateMqttClient();
        var received = new Deliveries(again);
        await ConnectPersistentAsync(broker, version, clientId, again);
        var redelivered = await received.NextAsync();
        Assert.Equal(("jobs/1", "work"), (redelivered.Topic, redelivered.Payload));
        Assert.True(redelivered.Dup);

        // Acknowledged this time: not sent again.
        await received.NoneAsync(TimeSpan.FromSeconds(1));
    }

    [Fact(Timeout = 60_000)]
    public async Task Consumers_end_with_their_subscription_or_session()
    {
        await using var broker = await StartAsync(fileStore: false);
        await using var nats = new NatsConnection(new NatsOpts { Url = broker.Url });
        var js = new NatsJSContext(nats);

        using (var client = await broker.ConnectAsync(MqttProtocolVersion.V500))
        {
            await client.SubscribeAsync("a/#", MqttQualityOfServiceLevel.AtLeastOnce);
            await client.SubscribeAsync("b", MqttQualityOfServiceLevel.ExactlyOnce);
            await client.SubscribeAsync("c", MqttQualityOfServiceLevel.AtMostOnce);
            Assert.Equal(2, await CountConsumersAsync(js));

            await client.UnsubscribeAsync("b");
            await WaitForAsync(async () => await CountConsumersAsync(js) == 1);

            // A clean session ends with its connection, and its consumers with it.
            await client.DisconnectAsync();
        }

        await WaitForAsync(async () => await CountConsumersAsync(js) == 0);
    }

    [Fact(Timeout = 60_000)]
    public async Task No_local_also_holds_for_qos1_messages()
    {
        await using var broker = await StartAsync(fileStore: false);
        using var client = await broker.ConnectAsync(MqttProtocolVersion.V500);
        var received = new Deliveries(client);
        await client.SubscribeAsync(new MqttClientSubscribeOptionsBuilder()
            .WithTopicFilter(f => f.WithTopic("chat/#").WithQualityOfServiceLevel(MqttQualityOfServiceLevel.AtLeastOnce).WithNoLocal())
            .Build());
        using var other = await broker.ConnectAsync(MqttProtocolVersion.V500);

        await client.PublishAsync("chat/room", "mine", MqttQualityOfServiceLevel.AtLeastOnce);
        await other.PublishAsync("chat/room", "theirs", MqttQualityOfServiceLevel.AtLeastOnce);

        Assert.Equal("theirs", (await received.NextAsync()).Payload);
        await received.NoneAsync();
    }

    [Theory(Timeout = 30_000)]
    [MemberData(nameof(Versions))]
    public async Task Without_jetstream_subscriptions_are_granted_qos0(MqttProtocolVersion version)
    {
        await using var broker = await MqttBroker.StartAsync();
        using var client = await broker.ConnectAsync(version);

        var granted = await client.SubscribeAsync(new MqttClientSubscribeOptionsBuilder()
            .WithTopicFilter(f => f.WithTopic("x").WithQualityOfServiceLevel(MqttQualityOfServiceLevel.ExactlyOnce)).Build());

        Assert.Equal(MqttClientSubscribeResultCode.GrantedQoS0, Assert.Single(granted.Items).ResultCode);
    }

    private Task<TestBroker> StartAsync(bool fileStore)
    {
        Broker.Abstractions.IBrokerPlugin store = fileStore ? new FileStorePlugin() : new MemoryStorePlugin();
        return MqttBroker.StartAsync(null, [new JetStreamPlugin(new JetStreamOptions { StoreDirectory = storeDirectory.Path }), store]);
    }

    private static async Task<IMqttClient> ConnectPersistentAsync(TestBroker broker, MqttProtocolVersion version, string clientId, IMqttClient? client = null)
    {
        client ??= new MqttClientFactory().CreateMqttClient();
        var builder = new MqttClientOptionsBuilder()
            .WithTcpServer("127.0.0.1", broker.MqttPort())
            .WithProtocolVersion(version)
            .WithClientId(clientId)
            .WithCleanSession(false)
            .WithTimeout(MqttBroker.Timeout);
        if (version == MqttProtocolVersion.V500)
        {
            builder.WithSessionExpiryInterval(3600);
        }

        using var cts = new CancellationTokenSource(MqttBroker.Timeout);
        await client.ConnectAsync(builder.Build(), cts.Token);
        return client;
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

    private static async Task WaitForAsync(Func<Task<bool>> condition)
    {
        using var cts = new CancellationTokenSource(MqttBroker.Timeout);
        while (!await condition())
        {
            await Task.Delay(50, cts.Token);
        }
    }

    /// <summary>What a client receives, with its QoS and DUP flag; optionally never acknowledged.</summary>
    private sealed class Deliveries
    {
        private readonly Channel<Delivery> messages = Channel.CreateUnbounded<Delivery>();

        public Deliveries(IMqttClient client, bool acknowledge = true)
        {
            client.ApplicationMessageReceivedAsync += e =>
            {
                e.AutoAcknowledge = acknowledge;
                var message = e.ApplicationMessage;
                messages.Writer.TryWrite(new Delivery(message.Topic, Encoding.UTF8.GetString(message.Payload), message.QualityOfServiceLevel, message.Dup));
                return Task.CompletedTask;
            };
        }

        public async Task<Delivery> NextAsync()
        {
            using var cts = new CancellationTokenSource(MqttBroker.Timeout);
            return await messages.Reader.ReadAsync(cts.Token);
        }

        public async Task NoneAsync(TimeSpan? wait = null)
        {
            await Task.Delay(wait ?? TimeSpan.FromMilliseconds(300));
            Assert.False(messages.Reader.TryRead(out var message), $"unexpected message on {message?.Topic}");
        }
    }

    private sealed record Delivery(string Topic, string Payload, MqttQualityOfServiceLevel Qos, bool Dup);
}
