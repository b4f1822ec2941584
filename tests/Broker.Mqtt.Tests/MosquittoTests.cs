using System.Globalization;
using System.Text;
using Broker.TestKit;
using MQTTnet.Formatter;

namespace Broker.Mqtt.Tests;

/// <summary>Interop with Mosquitto's command-line clients (Debian's mosquitto-clients 2.0), at MQTT 3.1.1 and 5.</summary>
public sealed class MosquittoTests
{
    private const string Sub = "mosquitto_sub";
    private const string Pub = "mosquitto_pub";

    public static TheoryData<string> Versions => ["mqttv311", "mqttv5"];

    [Theory(Timeout = 60_000)]
    [MemberData(nameof(Versions))]
    public async Task Mosquitto_clients_exchange_messages_through_the_broker(string version)
    {
        await using var broker = await MqttBroker.StartAsync();
        var port = broker.MqttPort().ToString(CultureInfo.InvariantCulture);
        // stdbuf: mosquitto_sub buffers its output when it is not a terminal, and the SUBACK line is awaited.
        await using var sub = ExternalProcess.Start("stdbuf", ["-oL", Sub, "-h", "127.0.0.1", "-p", port, "-V", version, "-t", "interop/#", "-C", "2", "-v", "-d"]);
        await sub.WaitForLineAsync(line => line.Contains("SUBACK", StringComparison.Ordinal), MqttBroker.Timeout);

        var published = await ExternalProcess.RunAsync(Pub, ["-h", "127.0.0.1", "-p", port, "-V", version, "-t", "interop/a b", "-m", "spaces are refused"], MqttBroker.Timeout);
        Assert.NotNull(published.ExitCode);
        Assert.Equal(0, (await ExternalProcess.RunAsync(Pub, ["-h", "127.0.0.1", "-p", port, "-V", version, "-t", "interop/one", "-m", "first", "-q", "1"], MqttBroker.Timeout)).ExitCode);
        Assert.Equal(0, (await ExternalProcess.RunAsync(Pub, ["-h", "127.0.0.1", "-p", port, "-V", version, "-t", "interop/two", "-m", "second", "-q", "2"], MqttBroker.Timeout)).ExitCode);

        var result = await sub.WaitForExitAsync(MqttBroker.Timeout);
        Assert.Equal(0, result.ExitCode);
        Assert.Contains("interop/one first", result.OutputLines);
        Assert.Contains("interop/two second", result.OutputLines);
        Assert.DoesNotContain(result.OutputLines, line => line.Contains("spaces", StringComparison.Ordinal));
    }

    [Fact(Timeout = 60_000)]
    public async Task Mosquitto_pub_reaches_mqttnet_and_retained_messages_reach_mosquitto_sub()
    {
        await using var broker = await MqttBroker.StartAsync();
        var port = broker.MqttPort().ToString(CultureInfo.InvariantCulture);
        using var mqttnet = await broker.ConnectAsync(MqttProtocolVersion.V500);
        var received = new Received(mqttnet);
        await mqttnet.SubscribeAsync("mixed/+");

        Assert.Equal(0, (await ExternalProcess.RunAsync(Pub, ["-h", "127.0.0.1", "-p", port, "-V", "mqttv5", "-t", "mixed/retained", "-m", "kept", "-r", "-D", "publish", "user-property", "origin", "mosquitto"], MqttBroker.Timeout)).ExitCode);
        var message = await received.NextAsync();
        Assert.Equal("kept", Encoding.UTF8.GetString(message.Payload));
        Assert.Equal("origin", Assert.Single(message.UserProperties!).Name);

        var sub = await ExternalProcess.RunAsync(Sub, ["-h", "127.0.0.1", "-p", port, "-V", "mqttv311", "-t", "mixed/#", "-C", "1", "-v"], MqttBroker.Timeout);
        Assert.Equal(0, sub.ExitCode);
        Assert.Equal("mixed/retained kept", Assert.Single(sub.OutputLines));
    }
}
