using Broker.Abstractions;
using Broker.TestKit;
using MQTTnet;
using MQTTnet.Formatter;

namespace Broker.Mqtt.Tests;

/// <summary>
/// An MQTT subscriber that stops reading is cut off as a slow consumer once more than <c>max_pending</c> bytes wait for
/// it, as nats-server cuts off NATS ones (counted in /varz and shown in /connz the same way), while a subscriber that reads on the same topic keeps getting every message.
/// </summary>
public sealed class SlowConsumerTests
{
    [Fact(Timeout = 90_000)]
    public async Task A_subscriber_that_stops_reading_is_closed_and_the_others_keep_receiving()
    {
        await using var broker = await MqttBroker.StartAsync(options =>
        {
            options.MaxPending = 1024 * 1024;
            options.Monitoring.Host = "127.0.0.1";
            options.Monitoring.Port = 0;
        });
        await using var stalled = await RawMqtt.ConnectedAsync(broker.MqttEndPoint(), "stalled");
        await stalled.SendAsync(RawMqtt.Packet(0x82, RawMqtt.U16(1), RawMqtt.Str("flood"), [0]));
        var (header, _) = await stalled.ReadPacketAsync();
        Assert.Equal(0x90, header);

        // From here on the stalled client reads nothing; the fast one counts what it gets.
        using var fast = await broker.ConnectAsync(MqttProtocolVersion.V311, "fast");
        var fastCount = 0;
        fast.ApplicationMessageReceivedAsync += _ =>
        {
            Interlocked.Increment(ref fastCount);
            return Task.CompletedTask;
        };
        await fast.SubscribeAsync("flood");

        await using var bus = broker.Bus.CreateClient();
        var payload = new byte[16 * 1024];
        var published = 0;
        var deadline = DateTime.UtcNow.AddSeconds(60);
        while (!broker.Logs.Contains("slow consumer"))
        {
            Assert.True(DateTime.UtcNow < deadline, $"no slow consumer after {published} messages");
            bus.Publish("flood", payload);
            if (++published % 2 == 0)
            {
                // Paced so that the reading subscriber, not the test, sets the speed.
                await Task.Delay(1);
            }
        }

        Assert.True(await stalled.ClosedAsync(), "the stalled subscriber is closed");

        // Counted and shown as nats-server shows a NATS slow consumer.
        await Eventually.AssertAsync(async () => (await MonitorHttp.GetJsonAsync(broker, "/varz")).GetProperty("slow_consumers").GetInt64() == 1, "/varz slow_consumers 1");
        // The closed connection is recorded once its close has finished, a moment after the socket went.
        await Eventually.AssertAsync(
            async () => (await MonitorHttp.GetJsonAsync(broker, "/connz?state=closed")).GetProperty("connections").EnumerateArray()
                .Any(c => c.GetProperty("reason").GetString() == "Slow Consumer (Pending Bytes)" && c.GetProperty("mqtt_client").GetString() == "stalled"),
            "/connz?state=closed shows the stalled client as a slow consumer");

        // The fast subscriber got every message, including those after the cut.
        for (var i = 1; i <= 100; i++)
        {
            bus.Publish("flood", payload);
            if (i % 2 == 0)
            {
                await Task.Delay(1);
            }
        }

        published += 100;
        Assert.True(await Eventually.TrueAsync(() => Volatile.Read(ref fastCount) == published, TimeSpan.FromSeconds(20)), $"fast subscriber got {fastCount} of {published}; " + string.Join("\n", broker.Logs.Entries.Where(e => e.Category.Contains("Mqtt", StringComparison.Ordinal))));
        Assert.True(fast.IsConnected);
    }
}
