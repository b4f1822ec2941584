using System.Text;
using Broker.TestKit;
using MQTTnet;
using MQTTnet.Formatter;

namespace Broker.Mqtt.Tests;

/// <summary>MQTT over the WebSocket plugin's /mqtt path and over TLS through the TLS plugin.</summary>
public sealed class TransportTests
{
    [Theory(Timeout = 30_000)]
    [InlineData(MqttProtocolVersion.V311)]
    [InlineData(MqttProtocolVersion.V500)]
    public async Task Mqtt_over_websocket_on_the_mqtt_path(MqttProtocolVersion version)
    {
        await using var broker = await MqttBroker.StartAsync(
            ("Plugins:WebSocket:host", "127.0.0.1"), ("Plugins:WebSocket:port", "-1"), ("Plugins:WebSocket:no_tls", "true"));
        var port = ((System.Net.IPEndPoint)broker.Server.GetEndPoint("websocket")).Port;
        using var ws = new MqttClientFactory().CreateMqttClient();
        await ws.ConnectAsync(new MqttClientOptionsBuilder()
            .WithWebSocketServer(o => o.WithUri($"ws://127.0.0.1:{port}/mqtt"))
            .WithProtocolVersion(version)
            .WithClientId("ws-client")
            .Build());
        var received = new Received(ws);
        await ws.SubscribeAsync("web/#");
        using var tcp = await broker.ConnectAsync(version);

        await tcp.PublishAsync("web/page", "hello over ws");
        Assert.Equal("hello over ws", Encoding.UTF8.GetString((await received.NextAsync()).Payload));

        await ws.PublishAsync("web/back", "and back", MQTTnet.Protocol.MqttQualityOfServiceLevel.AtLeastOnce);
        Assert.Equal("and back", Encoding.UTF8.GetString((await received.NextAsync()).Payload));
    }

    [Fact(Timeout = 30_000)]
    public async Task Mqtt_over_tls_through_the_tls_plugin()
    {
        await using var broker = await MqttBroker.StartAsync(
            ("tls:cert_file", TestCertificates.Shared.ServerCertFile),
            ("tls:key_file", TestCertificates.Shared.ServerKeyFile));
        using var client = new MqttClientFactory().CreateMqttClient();
        await client.ConnectAsync(new MqttClientOptionsBuilder()
            .WithTcpServer("127.0.0.1", broker.MqttPort())
            .WithProtocolVersion(MqttProtocolVersion.V500)
            .WithTlsOptions(o => o.WithCertificateValidationHandler(_ => true))
            .Build());
        var received = new Received(client);
        await client.SubscribeAsync("secure");
        await client.PublishAsync("secure", "encrypted");
        Assert.Equal("encrypted", Encoding.UTF8.GetString((await received.NextAsync()).Payload));

        // Clear text on the TLS port gets nowhere.
        await using var raw = await RawMqtt.ConnectAsync(broker.MqttEndPoint());
        await raw.SendAsync(RawMqtt.Connect("plain"));
        Assert.True(await raw.ClosedAsync());
    }
}
