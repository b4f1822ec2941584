using System.Globalization;
using System.Net;
using System.Net.Sockets;
using System.Text;
using Broker.TestKit;
using MQTTnet;
using MQTTnet.Formatter;
using NATS.Client.Core;

namespace Broker.Mqtt.Tests;

/// <summary>
/// The host executable as built (host/Broker.Host/bin/&lt;configuration&gt;), with the MQTT plugin the build placed in
/// its plugins/ folder, configured from its nats-server style configuration file alone: MQTT 3.1.1 and 5 clients and a NATS client exchange messages.
/// </summary>
public sealed class HostTests
{
    [Fact(Timeout = 60_000)]
    public async Task The_host_serves_mqtt_from_configuration_alone()
    {
        var configuration = new DirectoryInfo(Path.TrimEndingDirectorySeparator(AppContext.BaseDirectory)).Parent!.Name;
        var hostDll = RepositoryPaths.Combine("host", "Broker.Host", "bin", configuration, "net10.0", "Broker.Host.dll");
        Assert.True(File.Exists(hostDll), $"build the host first: {hostDll}");
        Assert.True(File.Exists(Path.Combine(Path.GetDirectoryName(hostDll)!, "plugins", "Broker.Adapters.Mqtt", "Broker.Adapters.Mqtt.dll")));
        var natsPort = Ports.GetFreePort();
        var mqttPort = Ports.GetFreePort();
        // nats-server's own syntax: the mqtt block reaches the plugin as its configuration section.
        var directory = Directory.CreateTempSubdirectory("mqtt-host-");
        var config = Path.Combine(directory.FullName, "broker.conf");
        await File.WriteAllTextAsync(config, $$"""
            listen: 127.0.0.1:{{natsPort}}
            mqtt {
              listen: "127.0.0.1:{{mqttPort}}"
              max_packet_size: 64KB
              authorization { timeout: "3s" }
            }
            """);
        await using var host = ExternalProcess.Start("dotnet", [hostDll, "-c", config]);
        Assert.True(await Eventually.TrueAsync(() => Ports.Accepts(mqttPort), TimeSpan.FromSeconds(30)));

        var factory = new MqttClientFactory();
        using var v5 = factory.CreateMqttClient();
        await v5.ConnectAsync(new MqttClientOptionsBuilder().WithTcpServer("127.0.0.1", mqttPort).WithProtocolVersion(MqttProtocolVersion.V500).Build());
        var received = new Received(v5);
        await v5.SubscribeAsync("from/#");
        using var v311 = factory.CreateMqttClient();
        await v311.ConnectAsync(new MqttClientOptionsBuilder().WithTcpServer("127.0.0.1", mqttPort).WithProtocolVersion(MqttProtocolVersion.V311).Build());
        await using var nats = new NatsConnection(new NatsOpts { Url = $"nats://127.0.0.1:{natsPort}" });
        await nats.ConnectAsync();

        await v311.PublishAsync("from/mqtt311", "a");
        await nats.PublishAsync("from.nats", Encoding.UTF8.GetBytes("b"));
        var topics = new[] { (await received.NextAsync()).Topic, (await received.NextAsync()).Topic }.Order().ToArray();
        Assert.Equal(["from/mqtt311", "from/nats"], topics);
        directory.Delete(recursive: true);
    }

    [Fact(Timeout = 60_000)]
    public async Task The_host_refuses_stream_replicas_above_1_at_start()
    {
        // nats-server on a single server starts with this and then fails every MQTT CONNECT; the broker says it at start.
        var configuration = new DirectoryInfo(Path.TrimEndingDirectorySeparator(AppContext.BaseDirectory)).Parent!.Name;
        var hostDll = RepositoryPaths.Combine("host", "Broker.Host", "bin", configuration, "net10.0", "Broker.Host.dll");
        var directory = Directory.CreateTempSubdirectory("mqtt-host-");
        var config = Path.Combine(directory.FullName, "broker.conf");
        await File.WriteAllTextAsync(config, $$"""
            listen: 127.0.0.1:{{Ports.GetFreePort()}}
            jetstream { store_dir: "{{directory.FullName}}" }
            mqtt {
              listen: "127.0.0.1:{{Ports.GetFreePort()}}"
              stream_replicas: 3
            }
            """);
        var result = await ExternalProcess.RunAsync("dotnet", [hostDll, "-c", config], TimeSpan.FromSeconds(45));
        Assert.NotEqual(0, result.ExitCode ?? 0);
        Assert.Contains("stream_replicas: 3 replicas need a JetStream cluster", result.Output + result.ErrorText, StringComparison.Ordinal);
        directory.Delete(recursive: true);
    }
}
