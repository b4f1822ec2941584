using Broker.JetStream;
using Broker.Storage.FileStore;
using Broker.TestKit;
using MQTTnet;
using MQTTnet.Formatter;
using MQTTnet.Protocol;

namespace Broker.Mqtt.Tests;

/// <summary>
/// Many sessions with one QoS 1 subscription each, on the file store (issue 25): each subscription has a durable
/// JetStream consumer, whose state store must not keep a descriptor open while idle. It did (a state slot file per
/// consumer), so at 10,000 sessions the sockets and the consumers' files together reached the process's 20,000
/// descriptors and the next consumer could not be created: its SUBACK granted QoS 0. Here with fewer sessions, counting
/// the descriptors the consumers hold.
/// </summary>
public sealed class QosSubscriptionScaleTests : IDisposable
{
    private const int Sessions = 150;

    private readonly TempDirectory storeDirectory = new("mqtt-qos1-scale-");

    public void Dispose()
    {
        storeDirectory.Dispose();
    }

    [Fact(Timeout = 240_000)]
    public async Task Idle_qos1_subscriptions_keep_no_descriptor_of_their_consumers_open_and_still_deliver()
    {
        Assert.True(Directory.Exists("/proc/self/fd"), "the test counts the process's descriptors through /proc (Linux)");
        await using var broker = await MqttBroker.StartAsync(null, [new JetStreamPlugin(new JetStreamOptions { StoreDirectory = storeDirectory.Path }), new FileStorePlugin()]);
        var clients = new List<IMqttClient>();
        try
        {
            for (var i = 0; i < Sessions; i++)
            {
                var client = await broker.ConnectAsync(MqttProtocolVersion.V311, $"scale-{i}");
                clients.Add(client);
                using var cts = new CancellationTokenSource(MqttBroker.Timeout);
                var result = await client.SubscribeAsync(new MqttClientSubscribeOptionsBuilder().WithTopicFilter($"scale/{i}", MqttQualityOfServiceLevel.AtLeastOnce).Build(), cts.Token);
                Assert.Equal(MqttClientSubscribeResultCode.GrantedQoS1, Assert.Single(result.Items).ResultCode);
            }

            // Every consumer wrote its starting state; none keeps its state files open afterwards.
            Assert.True(
                await Eventually.TrueAsync(() => ConsumerDescriptors() < 10, TimeSpan.FromSeconds(30)),
                $"{ConsumerDescriptors()} descriptors open on consumer state files of {Sessions} idle consumers");

            // Still QoS 1: a message published now reaches its session at QoS 1, and its acknowledgement is written
            // (opening the consumer's state file again for the write only).
            var last = clients[^1];
            var received = new Received(last);
            using (var publisher = await broker.ConnectAsync(MqttProtocolVersion.V311))
            {
                await publisher.PublishAsync($"scale/{Sessions - 1}", "after", MqttQualityOfServiceLevel.AtLeastOnce);
            }

            var message = await received.NextAsync();
            Assert.Equal(($"scale/{Sessions - 1}", MqttQualityOfServiceLevel.AtLeastOnce), (message.Topic, message.QualityOfServiceLevel));
            Assert.True(await Eventually.TrueAsync(() => ConsumerDescriptors() < 10, TimeSpan.FromSeconds(30)), $"{ConsumerDescriptors()} descriptors open after the delivery");
        }
        finally
        {
            foreach (var client in clients)
            {
                client.Dispose();
            }
        }
    }

    /// <summary>Descriptors of this process open on files under the consumers' folders (<c>obs/</c>) of this test's store.</summary>
    private int ConsumerDescriptors()
    {
        var count = 0;
        foreach (var fd in Directory.EnumerateFileSystemEntries("/proc/self/fd"))
        {
            try
            {
                if (new FileInfo(fd).LinkTarget is { } target && target.StartsWith(storeDirectory.Path, StringComparison.Ordinal) && target.Contains("/obs/", StringComparison.Ordinal))
                {
                    count++;
                }
            }
            catch (IOException)
            {
                // Closed meanwhile.
            }
        }

        return count;
    }
}
