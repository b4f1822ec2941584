using System.Diagnostics;
using MQTTnet;
using static Broker.Mqtt.Tests.RawMqtt;

namespace Broker.Mqtt.Tests.Mqtt5;

/// <summary>
/// Keep alive (sections 3.1.2.10 and 3.2.2.3.14), against the broker and Mosquitto: a configured maximum
/// (<c>max_keep_alive</c>, Mosquitto's <c>max_keepalive</c>) reaches MQTT 5 clients as CONNACK's Server Keep Alive
/// (MQTT-3.2.2-21), without it the client's value stands (MQTT-3.2.2-22), and a silent client is closed after one and a
/// half intervals (MQTT-3.1.2-22).
/// </summary>
public sealed class KeepAliveTests
{
    [Theory(Timeout = 60_000)]
    [MemberData(nameof(Mqtt5Target.Servers), MemberType = typeof(Mqtt5Target))]
    [Trait("Mqtt5", "[MQTT-3.2.2-21]")]
    public async Task ServerKeepAlive_MQTT_3_2_2_21_a_maximum_lowers_the_clients_keep_alive(Mqtt5Server kind)
    {
        await using var target = await Mqtt5Target.StartAsync(kind, [("max_keep_alive", "10")], ["max_keepalive 10"]);
        using var above = new MqttClientFactory().CreateMqttClient();
        using var cts = new CancellationTokenSource(MqttBroker.Timeout);
        var lowered = await above.ConnectAsync(Options(target, "above", 60), cts.Token);
        Assert.Equal((ushort)10, lowered.ServerKeepAlive);

        using var none = new MqttClientFactory().CreateMqttClient();
        var imposed = await none.ConnectAsync(Options(target, "none", 0), cts.Token);
        Assert.Equal((ushort)10, imposed.ServerKeepAlive);

        // MQTT-3.2.2-22: within the maximum the client's own value stands, and no Server Keep Alive is sent.
        using var within = new MqttClientFactory().CreateMqttClient();
        var kept = await within.ConnectAsync(Options(target, "within", 5), cts.Token);
        Assert.Equal((ushort)0, kept.ServerKeepAlive);
    }

    [Theory(Timeout = 60_000)]
    [MemberData(nameof(Mqtt5Target.Servers), MemberType = typeof(Mqtt5Target))]
    [Trait("Mqtt5", "[MQTT-3.1.2-22]")]
    public async Task KeepAlive_MQTT_3_1_2_22_the_server_keep_alive_is_enforced_at_one_and_a_half_times(Mqtt5Server kind)
    {
        // Mosquitto takes max_keepalive 10 at the least.
        await using var target = await Mqtt5Target.StartAsync(kind, [("max_keep_alive", "10")], ["max_keepalive 10"]);
        await using var raw = await RawMqtt.ConnectAsync(target.EndPoint);
        // Counted from the client's last packet, the CONNECT (its CONNACK may follow a moment later: the account's
        // first CONNECT waits for its JetStream state).
        var silence = Stopwatch.StartNew();
        await raw.SendAsync(Connect("silent", level: 5, keepAlive: 60));
        var (header, connack) = await raw.ReadPacketAsync();
        Assert.Equal(0x20, header);
        Assert.Equal(10, Mqtt5Properties.Find(connack.AsSpan(2), 0x13));

        Assert.True(await raw.ClosedAsync(TimeSpan.FromSeconds(30)), "still open");
        Assert.InRange(silence.Elapsed, TimeSpan.FromSeconds(14.5), TimeSpan.FromSeconds(25));
    }

    /// <summary>MQTT 3.1.1 has no Server Keep Alive: its clients keep their own, as Mosquitto 2.0.11 lets them (checked).</summary>
    [Theory(Timeout = 60_000)]
    [MemberData(nameof(Mqtt5Target.Servers), MemberType = typeof(Mqtt5Target))]
    public async Task ServerKeepAlive_an_mqtt_311_client_above_the_maximum_keeps_its_own(Mqtt5Server kind)
    {
        await using var target = await Mqtt5Target.StartAsync(kind, [("max_keep_alive", "10")], ["max_keepalive 10"]);
        await using var raw = await RawMqtt.ConnectAsync(target.EndPoint);
        await raw.SendAsync(Connect("old", level: 4, keepAlive: 60));
        var (header, body) = await raw.ReadPacketAsync();
        Assert.Equal(0x20, header);
        Assert.Equal([0, 0], body);
    }

    private static MqttClientOptions Options(Mqtt5Target target, string clientId, int keepAlive)
        => new MqttClientOptionsBuilder().WithTcpServer(target.EndPoint.Address.ToString(), target.EndPoint.Port)
            .WithProtocolVersion(MQTTnet.Formatter.MqttProtocolVersion.V500).WithClientId(clientId)
            .WithKeepAlivePeriod(TimeSpan.FromSeconds(keepAlive)).WithTimeout(MqttBroker.Timeout).Build();
}
