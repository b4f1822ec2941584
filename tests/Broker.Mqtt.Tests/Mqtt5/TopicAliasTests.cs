using System.Text;
using static Broker.Mqtt.Tests.RawMqtt;

namespace Broker.Mqtt.Tests.Mqtt5;

/// <summary>
/// MQTT 5 topic aliases (section 3.3.2.3.4), against the broker and Mosquitto, with raw packets since MQTTnet never sends
/// an invalid alias: an alias of 0 or above the server's Topic Alias Maximum is refused with DISCONNECT 0x94 (section
/// 3.3.4), an unknown alias with an empty topic with 0x82, and the server's aliases stay within the client's maximum.
/// </summary>
public sealed class TopicAliasTests
{
    /// <summary>Mosquitto 2.0.11 answers 0x81 (malformed packet) here (checked): it fails alias 0 while reading the properties.</summary>
    [Theory(Timeout = 60_000)]
    [InlineData(Mqtt5Server.Broker)]
    [Trait("Mqtt5", "[MQTT-3.3.2-8]")]
    public async Task TopicAlias_MQTT_3_3_2_8_alias_0_is_refused_with_0x94(Mqtt5Server kind)
    {
        await using var target = await Mqtt5Target.StartAsync(kind);
        await using var raw = await target.RawAsync("zero");
        await raw.SendAsync(Packet(0x30, Str("t"), [3, 0x23, 0, 0], "x"u8.ToArray()));
        await ExpectDisconnectAsync(raw, 0x94);
    }

    [Theory(Timeout = 60_000)]
    [MemberData(nameof(Mqtt5Target.Servers), MemberType = typeof(Mqtt5Target))]
    [Trait("Mqtt5", "[MQTT-3.3.2-9]")]
    public async Task TopicAlias_MQTT_3_3_2_9_alias_above_the_servers_maximum_is_refused_with_0x94(Mqtt5Server kind)
    {
        await using var target = await Mqtt5Target.StartAsync(kind, [("topic_alias_maximum", "5")], ["max_topic_alias 5"]);
        await using var raw = await RawMqtt.ConnectAsync(target.EndPoint);
        await raw.SendAsync(Connect("above", level: 5));
        var (header, connack) = await raw.ReadPacketAsync();
        Assert.Equal(0x20, header);
        Assert.Equal(5, TopicAliasMaximum(connack));

        await raw.SendAsync(Packet(0x30, Str("t"), [3, 0x23, 0, 6], "x"u8.ToArray()));
        await ExpectDisconnectAsync(raw, 0x94);
    }

    [Theory(Timeout = 60_000)]
    [MemberData(nameof(Mqtt5Target.Servers), MemberType = typeof(Mqtt5Target))]
    [Trait("Mqtt5", "[MQTT-3.3.2-12]")]
    public async Task TopicAlias_MQTT_3_3_2_12_an_unknown_alias_without_a_topic_is_a_protocol_error(Mqtt5Server kind)
    {
        await using var target = await Mqtt5Target.StartAsync(kind);
        await using var raw = await target.RawAsync("unknown");
        await raw.SendAsync(Packet(0x30, Str(""), [3, 0x23, 0, 1], "x"u8.ToArray()));

        // Section 3.3.4: no mapping for the alias and an empty topic is 0x82 (Mosquitto says the same).
        await ExpectDisconnectAsync(raw, 0x82);
    }

    [Theory(Timeout = 60_000)]
    [MemberData(nameof(Mqtt5Target.Servers), MemberType = typeof(Mqtt5Target))]
    [Trait("Mqtt5", "[MQTT-3.3.2-12]")]
    public async Task TopicAlias_MQTT_3_3_2_12_aliases_up_to_the_maximum_stand_for_their_topic(Mqtt5Server kind)
    {
        await using var target = await Mqtt5Target.StartAsync(kind, [("topic_alias_maximum", "2")], ["max_topic_alias 2"]);
        using var subscriber = await target.ConnectAsync("reader");
        var received = new Received(subscriber);
        await subscriber.SubscribeAsync("aliased/#");
        await using var raw = await target.RawAsync("writer");

        await raw.SendAsync(Packet(0x30, Str("aliased/one"), [3, 0x23, 0, 2], "1"u8.ToArray()));
        await raw.SendAsync(Packet(0x30, Str(""), [3, 0x23, 0, 2], "2"u8.ToArray()));
        await raw.SendAsync(Packet(0x30, Str("aliased/two"), [3, 0x23, 0, 2], "3"u8.ToArray()));
        await raw.SendAsync(Packet(0x30, Str(""), [3, 0x23, 0, 2], "4"u8.ToArray()));

        var got = new List<string>();
        for (var i = 0; i < 4; i++)
        {
            var message = await received.NextAsync();
            got.Add(message.Topic + "=" + Encoding.UTF8.GetString(message.Payload));
        }

        Assert.Equal(["aliased/one=1", "aliased/one=2", "aliased/two=3", "aliased/two=4"], got);
    }

    [Theory(Timeout = 60_000)]
    [MemberData(nameof(Mqtt5Target.Servers), MemberType = typeof(Mqtt5Target))]
    [Trait("Mqtt5", "[MQTT-3.3.2-11]")]
    public async Task TopicAlias_MQTT_3_3_2_11_the_servers_aliases_stay_within_the_clients_maximum(Mqtt5Server kind)
    {
        await using var target = await Mqtt5Target.StartAsync(kind);

        // CONNECT with Topic Alias Maximum 2 (0x22).
        await using var raw = await target.RawAsync("aliases", [0x22, 0, 2]);
        await raw.SendAsync(Packet(0x82, U16(1), [0], Str("out/#"), [0]));
        Assert.Equal(0x90, (await raw.ReadPacketAsync()).Header);
        using var publisher = await target.ConnectAsync("publisher");
        string[] topics = ["out/a", "out/b", "out/c", "out/a", "out/b", "out/c"];
        foreach (var topic in topics)
        {
            await publisher.PublishAsync(topic, topic);
        }

        var known = new Dictionary<int, string>();
        foreach (var expected in topics)
        {
            var (header, body) = await raw.ReadPacketAsync();
            Assert.Equal(0x30, header);
            var topicLength = (body[0] << 8) | body[1];
            var topic = Encoding.UTF8.GetString(body, 2, topicLength);
            var alias = TopicAliasOf(body.AsSpan(2 + topicLength));
            Assert.InRange(alias, 0, 2);
            if (alias > 0 && topic.Length > 0)
            {
                known[alias] = topic;
            }

            Assert.Equal(expected, topic.Length > 0 ? topic : known[alias]);
        }
    }

    private static async Task ExpectDisconnectAsync(RawMqtt raw, byte reason)
    {
        var (header, body) = await raw.ReadPacketAsync();
        Assert.Equal(0xE0, header);
        Assert.Equal(reason, body[0]);
        Assert.True(await raw.ClosedAsync());
    }

    /// <summary>The Topic Alias Maximum (0x22) of a CONNACK body, or 0.</summary>
    private static int TopicAliasMaximum(byte[] connack) => (int)Mqtt5Properties.Find(connack.AsSpan(2), 0x22);

    /// <summary>The Topic Alias (0x23) in the properties that start a QoS 0 PUBLISH's rest, or 0.</summary>
    private static int TopicAliasOf(ReadOnlySpan<byte> rest) => (int)Mqtt5Properties.Find(rest, 0x23);
}
