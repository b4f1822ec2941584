using System.Diagnostics;
using System.Text;
using static Broker.Mqtt.Tests.RawMqtt;

namespace Broker.Mqtt.Tests.Mqtt5;

/// <summary>
/// The MQTT 5 Will Delay Interval (section 3.1.3.2.2), against the broker and Mosquitto: the will is published when the
/// delay passes or the session ends, whichever is first (MQTT-3.1.2-8), and not at all when a connection resumes the
/// session in time (MQTT-3.1.3-9). The willing client is a raw socket, closed without DISCONNECT.
/// </summary>
public sealed class WillDelayTests
{
    [Theory(Timeout = 60_000)]
    [MemberData(nameof(Mqtt5Target.Servers), MemberType = typeof(Mqtt5Target))]
    [Trait("Mqtt5", "[MQTT-3.1.3-9]")]
    public async Task WillDelay_MQTT_3_1_3_9_no_will_when_the_session_resumes_before_the_delay(Mqtt5Server kind)
    {
        await using var target = await Mqtt5Target.StartAsync(kind);
        var (watcher, received) = await WatchWillsAsync(target);
        using var watching = watcher;

        await using (var willing = await ConnectWithWillAsync(target, "resumer", cleanStart: true, sessionExpiry: 60, willDelay: 3))
        {
        }

        // Back within the delay, to the same session: the will is dropped.
        await using var back = await RawMqtt.ConnectAsync(target.EndPoint);
        await back.SendAsync(ConnectWithWill("resumer", cleanStart: false, sessionExpiry: 60, willDelay: 3, "will/resumer", "second"));
        var (header, body) = await back.ReadPacketAsync();
        Assert.Equal(0x20, header);
        Assert.Equal([1, 0], body[..2]);
        await received.NoneAsync(TimeSpan.FromSeconds(4));
    }

    [Theory(Timeout = 60_000)]
    [MemberData(nameof(Mqtt5Target.Servers), MemberType = typeof(Mqtt5Target))]
    [Trait("Mqtt5", "[MQTT-3.1.2-8]")]
    public async Task WillDelay_MQTT_3_1_2_8_the_will_follows_the_delay(Mqtt5Server kind)
    {
        await using var target = await Mqtt5Target.StartAsync(kind);
        var (watcher, received) = await WatchWillsAsync(target);
        using var watching = watcher;

        var closed = Stopwatch.StartNew();
        await using (var willing = await ConnectWithWillAsync(target, "delayed", cleanStart: true, sessionExpiry: 60, willDelay: 2))
        {
        }

        var will = await received.NextAsync();
        Assert.Equal("will/delayed", will.Topic);
        Assert.Equal("gone", Encoding.UTF8.GetString(will.Payload));
        Assert.True(closed.Elapsed >= TimeSpan.FromSeconds(1.8), $"the will came {closed.Elapsed} after the close, before its 2 s delay");
    }

    /// <summary>Mosquitto 2.0.11 waits for the will's delay here too (checked), past the end of the session.</summary>
    [Theory(Timeout = 60_000)]
    [InlineData(Mqtt5Server.Broker)]
    [Trait("Mqtt5", "[MQTT-3.1.2-8]")]
    public async Task WillDelay_MQTT_3_1_2_8_the_will_goes_when_the_session_ends_first(Mqtt5Server kind)
    {
        await using var target = await Mqtt5Target.StartAsync(kind);
        var (watcher, received) = await WatchWillsAsync(target);
        using var watching = watcher;

        // Session expiry 0: the session ends with the connection, so the will goes at once whatever its delay.
        var closed = Stopwatch.StartNew();
        await using (var ending = await ConnectWithWillAsync(target, "ending", cleanStart: true, sessionExpiry: 0, willDelay: 30))
        {
        }

        Assert.Equal("will/ending", (await received.NextAsync()).Topic);
        Assert.True(closed.Elapsed < TimeSpan.FromSeconds(5), $"took {closed.Elapsed}");
    }

    /// <summary>Mosquitto 2.0.11 waits for the will's delay here (checked): it does not end the session first.</summary>
    [Fact(Timeout = 60_000)]
    [Trait("Mqtt5", "[MQTT-3.1.2-8]")]
    public async Task WillDelay_MQTT_3_1_2_8_the_will_goes_when_the_session_expires_before_the_delay()
    {
        await using var target = await Mqtt5Target.StartAsync(Mqtt5Server.Broker);
        var (watcher, received) = await WatchWillsAsync(target);
        using var watching = watcher;

        // Session expiry 2 s under a 30 s delay: the will goes when the session expires.
        var closed = Stopwatch.StartNew();
        await using (var expiring = await ConnectWithWillAsync(target, "expiring", cleanStart: true, sessionExpiry: 2, willDelay: 30))
        {
        }

        Assert.Equal("will/expiring", (await received.NextAsync(TimeSpan.FromSeconds(15))).Topic);
        Assert.True(closed.Elapsed >= TimeSpan.FromSeconds(1.8) && closed.Elapsed < TimeSpan.FromSeconds(15), $"took {closed.Elapsed}");
    }

    /// <summary>
    /// A new connection with Clean Start ends the session, so the will waiting for its delay goes at once (section
    /// 3.1.3.2.2). Mosquitto 2.0.11 does not send it then (checked).
    /// </summary>
    [Fact(Timeout = 60_000)]
    [Trait("Mqtt5", "[MQTT-3.1.2-8]")]
    public async Task WillDelay_MQTT_3_1_2_8_a_clean_start_ends_the_session_and_sends_the_waiting_will()
    {
        await using var target = await Mqtt5Target.StartAsync(Mqtt5Server.Broker);
        var (watcher, received) = await WatchWillsAsync(target);
        using var watching = watcher;

        await using (var willing = await ConnectWithWillAsync(target, "restarted", cleanStart: true, sessionExpiry: 60, willDelay: 30))
        {
        }

        await using var clean = await RawMqtt.ConnectedAsync(target.EndPoint, "restarted", level: 5);
        Assert.Equal("will/restarted", (await received.NextAsync()).Topic);
    }

    [Theory(Timeout = 60_000)]
    [MemberData(nameof(Mqtt5Target.Servers), MemberType = typeof(Mqtt5Target))]
    [Trait("Mqtt5", "[MQTT-3.1.2-10]")]
    public async Task WillDelay_MQTT_3_1_2_10_a_normal_disconnect_removes_the_will(Mqtt5Server kind)
    {
        await using var target = await Mqtt5Target.StartAsync(kind);
        var (watcher, received) = await WatchWillsAsync(target);
        using var watching = watcher;

        var willing = await ConnectWithWillAsync(target, "polite", cleanStart: true, sessionExpiry: 60, willDelay: 1);
        await willing.SendAsync(0xE0, 0x00);
        Assert.True(await willing.ClosedAsync());
        await willing.DisposeAsync();
        await received.NoneAsync(TimeSpan.FromSeconds(2.5));
    }

    [Theory(Timeout = 60_000)]
    [MemberData(nameof(Mqtt5Target.Servers), MemberType = typeof(Mqtt5Target))]
    [Trait("Mqtt5", "[MQTT-3.1.3-9]")]
    public async Task WillDelay_MQTT_3_1_3_9_a_takeover_that_resumes_the_session_drops_a_delayed_will(Mqtt5Server kind)
    {
        await using var target = await Mqtt5Target.StartAsync(kind);
        var (watcher, received) = await WatchWillsAsync(target);
        using var watching = watcher;

        await using var first = await ConnectWithWillAsync(target, "taken", cleanStart: true, sessionExpiry: 60, willDelay: 2);
        await using var second = await ConnectWithWillAsync(target, "taken", cleanStart: false, sessionExpiry: 60, willDelay: 2);
        Assert.True(await first.ClosedAsync());
        await received.NoneAsync(TimeSpan.FromSeconds(3));
    }

    /// <summary>Mosquitto 2.0.11 does not send the will here (checked).</summary>
    [Theory(Timeout = 60_000)]
    [InlineData(Mqtt5Server.Broker)]
    [Trait("Mqtt5", "[MQTT-3.1.2-8]")]
    public async Task WillDelay_MQTT_3_1_2_8_a_takeover_with_clean_start_sends_the_will(Mqtt5Server kind)
    {
        await using var target = await Mqtt5Target.StartAsync(kind);
        var (watcher, received) = await WatchWillsAsync(target);
        using var watching = watcher;

        await using var first = await ConnectWithWillAsync(target, "replaced", cleanStart: true, sessionExpiry: 60, willDelay: 30);
        await using var second = await RawMqtt.ConnectedAsync(target.EndPoint, "replaced", level: 5);
        var will = await received.NextAsync();
        Assert.Equal("will/replaced", will.Topic);
    }

    /// <summary>A client subscribed to the wills' topics, and what it receives.</summary>
    private static async Task<(MQTTnet.IMqttClient Watcher, Received Received)> WatchWillsAsync(Mqtt5Target target)
    {
        var watcher = await target.ConnectAsync("watcher");
        var received = new Received(watcher);
        await watcher.SubscribeAsync("will/#");
        return (watcher, received);
    }

    private static async Task<RawMqtt> ConnectWithWillAsync(Mqtt5Target target, string clientId, bool cleanStart, uint sessionExpiry, uint willDelay)
    {
        var raw = await RawMqtt.ConnectAsync(target.EndPoint);
        await raw.SendAsync(ConnectWithWill(clientId, cleanStart, sessionExpiry, willDelay, "will/" + clientId, "gone"));
        var (header, body) = await raw.ReadPacketAsync();
        Assert.Equal(0x20, header);
        Assert.Equal(0, body[1]);
        return raw;
    }

    /// <summary>An MQTT 5 CONNECT with a QoS 0 will and its delay, and the session expiry interval.</summary>
    internal static byte[] ConnectWithWill(string clientId, bool cleanStart, uint sessionExpiry, uint willDelay, string willTopic, string willPayload)
    {
        byte[] properties = sessionExpiry > 0 ? [0x11, .. U32(sessionExpiry)] : [];
        byte[] willProperties = willDelay > 0 ? [0x18, .. U32(willDelay)] : [];
        return Packet(
            0x10,
            Str("MQTT"),
            [5, (byte)(0x04 | (cleanStart ? 0x02 : 0))],
            U16(60),
            [.. VarInt(properties.Length), .. properties],
            Str(clientId),
            [.. VarInt(willProperties.Length), .. willProperties],
            Str(willTopic),
            Str(willPayload));
    }

    internal static byte[] U32(uint value) => [(byte)(value >> 24), (byte)(value >> 16), (byte)(value >> 8), (byte)value];
}
