using Broker.TestKit;

namespace Broker.Mqtt.Tests;

/// <summary>
/// Stopping the broker with idle MQTT clients connected. Their reads wait without the listener's stop token (a
/// registration per idle connection, issue 25): the adapter watches the token once and wakes every connection's read
/// when it fires, so each still says goodbye as before, MQTT 5 clients with DISCONNECT 0x8B (server shutting down,
/// MQTT-3.14.2-1; nats-server 2.9.10 has no MQTT 5) and MQTT 3.1.1 clients by closing the connection.
/// </summary>
public sealed class ShutdownTests
{
    private const int ClientsPerVersion = 3;

    [Fact(Timeout = 60_000)]
    public async Task Stopping_the_broker_wakes_every_idle_connection_and_says_goodbye()
    {
        var broker = await MqttBroker.StartAsync();
        var v5 = new List<RawMqtt>();
        var v311 = new List<RawMqtt>();
        Task? stopped = null;
        try
        {
            for (var i = 0; i < ClientsPerVersion; i++)
            {
                v5.Add(await RawMqtt.ConnectedAsync(broker.MqttEndPoint(), $"five-{i}", level: 5));
                v311.Add(await RawMqtt.ConnectedAsync(broker.MqttEndPoint(), $"three-{i}", level: 4));
            }

            stopped = broker.DisposeAsync().AsTask();
            foreach (var client in v5)
            {
                var (header, body) = await client.ReadPacketAsync();
                Assert.Equal(0xE0, header);
                Assert.Equal(0x8B, body[0]);
            }

            foreach (var client in v311)
            {
                Assert.True(await client.ClosedAsync(), "a 3.1.1 connection stayed open while the broker stopped");
            }

            await stopped.WaitAsync(MqttBroker.Timeout);
        }
        finally
        {
            foreach (var client in v5.Concat(v311))
            {
                await client.DisposeAsync();
            }

            await (stopped ?? broker.DisposeAsync().AsTask()).WaitAsync(MqttBroker.Timeout);
        }
    }
}
