using System.Text;
using MQTTnet;
using MQTTnet.Protocol;

namespace Broker.Mqtt.Tests.Mqtt5;

/// <summary>
/// MQTT 5 subscription identifiers (section 3.8.2.1.2, 3.3.4), against the broker and Mosquitto, with MQTTnet's client.
/// Overlapping subscriptions of one session get one PUBLISH per matching subscription, each at that subscription's QoS
/// and carrying its own identifier (MQTT-3.3.4-2, -3.3.4-3, -3.3.4-5), as Mosquitto 2.0 sends them; the standard also
/// allows a single copy carrying every identifier (MQTT-3.3.4-4), which neither server sends.
/// </summary>
public sealed class SubscriptionIdentifierTests
{
    [Theory(Timeout = 60_000)]
    [MemberData(nameof(Mqtt5Target.Servers), MemberType = typeof(Mqtt5Target))]
    [Trait("Mqtt5", "[MQTT-3.3.4-5]")]
    public async Task SubscriptionIdentifier_MQTT_3_3_4_5_overlapping_subscriptions_each_send_their_identifier(Mqtt5Server kind)
    {
        var copies = await OverlappingCopiesAsync(kind, "ov", thirdIdentifier: null, MqttQualityOfServiceLevel.AtMostOnce);

        Assert.All(copies, m => Assert.Equal("ov", Encoding.UTF8.GetString(m.Payload)));
        Assert.Equal(["", "1", "2"], Identifiers(copies));
    }

    [Theory(Timeout = 60_000)]
    [MemberData(nameof(Mqtt5Target.Servers), MemberType = typeof(Mqtt5Target))]
    [Trait("Mqtt5", "[MQTT-3.3.4-2]")]
    public async Task SubscriptionIdentifier_MQTT_3_3_4_2_overlapping_copies_keep_each_subscriptions_qos(Mqtt5Server kind)
    {
        var copies = await OverlappingCopiesAsync(kind, "oq", thirdIdentifier: 3, MqttQualityOfServiceLevel.ExactlyOnce);

        // One copy per subscription, at the lower of the publish's and that subscription's QoS, with its identifier.
        Assert.Equal(
            ["1:AtLeastOnce", "2:AtMostOnce", "3:ExactlyOnce"],
            copies.Select(m => string.Join(',', m.SubscriptionIdentifiers ?? []) + ":" + m.QualityOfServiceLevel).Order(StringComparer.Ordinal).ToArray());
    }

    /// <summary>
    /// Subscribes <c>prefix/#</c> (QoS 1, identifier 1), <c>prefix/+</c> (QoS 0, 2) and <c>prefix/b</c> (QoS 2,
    /// <paramref name="thirdIdentifier"/>), publishes once to <c>prefix/b</c> and returns the copies the session got.
    /// </summary>
    private static async Task<MqttApplicationMessage[]> OverlappingCopiesAsync(Mqtt5Server kind, string prefix, uint? thirdIdentifier, MqttQualityOfServiceLevel publishQos)
    {
        await using var target = await Mqtt5Target.StartAsync(kind);
        using var subscriber = await target.ConnectAsync(prefix + "-overlap");
        var received = new Received(subscriber);
        await SubscribeAsync(subscriber, prefix + "/#", MqttQualityOfServiceLevel.AtLeastOnce, identifier: 1);
        await SubscribeAsync(subscriber, prefix + "/+", MqttQualityOfServiceLevel.AtMostOnce, identifier: 2);
        await SubscribeAsync(subscriber, prefix + "/b", MqttQualityOfServiceLevel.ExactlyOnce, thirdIdentifier);
        using var publisher = await target.ConnectAsync(prefix + "-overlap-pub");

        await publisher.PublishAsync(prefix + "/b", prefix, publishQos);
        var copies = await NextAsync(received, 3);
        await received.NoneAsync();
        return copies;
    }

    [Theory(Timeout = 60_000)]
    [MemberData(nameof(Mqtt5Target.Servers), MemberType = typeof(Mqtt5Target))]
    [Trait("Mqtt5", "[MQTT-3.8.4-3]")]
    public async Task SubscriptionIdentifier_MQTT_3_8_4_3_a_replaced_subscription_takes_the_new_identifier(Mqtt5Server kind)
    {
        await using var target = await Mqtt5Target.StartAsync(kind);
        using var subscriber = await target.ConnectAsync("replace-id");
        var received = new Received(subscriber);
        await SubscribeAsync(subscriber, "rp/x", MqttQualityOfServiceLevel.AtLeastOnce, identifier: 5);
        await SubscribeAsync(subscriber, "rp/x", MqttQualityOfServiceLevel.AtLeastOnce, identifier: 6);
        await SubscribeAsync(subscriber, "rp/y", MqttQualityOfServiceLevel.AtMostOnce, identifier: 7);
        await SubscribeAsync(subscriber, "rp/y", MqttQualityOfServiceLevel.AtMostOnce, identifier: null);
        using var publisher = await target.ConnectAsync("replace-id-pub");

        await publisher.PublishAsync("rp/x", "x", MqttQualityOfServiceLevel.AtLeastOnce);
        await publisher.PublishAsync("rp/y", "y");

        // Two topics at two QoS levels: MQTT orders neither across topics nor across QoS (ours delivers QoS 1 through
        // JetStream, QoS 0 directly), so the two may arrive either way round.
        var byTopic = new[] { await received.NextAsync(), await received.NextAsync() }.ToDictionary(m => m.Topic);
        Assert.Equal([6u], byTopic["rp/x"].SubscriptionIdentifiers);
        Assert.Empty(byTopic["rp/y"].SubscriptionIdentifiers ?? []);
        await received.NoneAsync();
    }

    [Theory(Timeout = 60_000)]
    [MemberData(nameof(Mqtt5Target.Servers), MemberType = typeof(Mqtt5Target))]
    [Trait("Mqtt5", "[MQTT-3.3.4-3]")]
    public async Task SubscriptionIdentifier_MQTT_3_3_4_3_retained_messages_carry_the_identifier(Mqtt5Server kind)
    {
        await using var target = await Mqtt5Target.StartAsync(kind);
        using var publisher = await target.ConnectAsync("retained-id-pub");
        await publisher.PublishAsync(new MqttApplicationMessageBuilder().WithTopic("ri/a").WithPayload("kept").WithRetainFlag().WithQualityOfServiceLevel(MqttQualityOfServiceLevel.AtLeastOnce).Build());
        using var subscriber = await target.ConnectAsync("retained-id");
        var received = new Received(subscriber);

        await SubscribeAsync(subscriber, "ri/+", MqttQualityOfServiceLevel.AtLeastOnce, identifier: 268_435_455);

        var message = await received.NextAsync();
        Assert.True(message.Retain);
        Assert.Equal([268_435_455u], message.SubscriptionIdentifiers);
    }

    [Theory(Timeout = 60_000)]
    [MemberData(nameof(Mqtt5Target.Servers), MemberType = typeof(Mqtt5Target))]
    [Trait("Mqtt5", "[MQTT-3.8.2.1.2]")]
    public async Task SubscriptionIdentifier_MQTT_3_8_2_1_2_identifiers_are_kept_when_the_session_resumes(Mqtt5Server kind)
    {
        await using var target = await Mqtt5Target.StartAsync(kind);
        void Persistent(MqttClientOptionsBuilder o) => o.WithCleanStart(false).WithSessionExpiryInterval(60);
        using (var first = await target.ConnectAsync("resume-id", o => o.WithCleanStart(true).WithSessionExpiryInterval(60)))
        {
            await SubscribeAsync(first, "rs/#", MqttQualityOfServiceLevel.AtLeastOnce, identifier: 41);
            await SubscribeAsync(first, "rs/+", MqttQualityOfServiceLevel.AtMostOnce, identifier: 42);
            await first.DisconnectAsync(new MqttClientDisconnectOptionsBuilder().WithSessionExpiryInterval(60).Build());
        }

        using var publisher = await target.ConnectAsync("resume-id-pub");
        // Kept for the session while it is away (QoS 1 subscription only).
        await publisher.PublishAsync("rs/away", "away", MqttQualityOfServiceLevel.AtLeastOnce);

        var resumed = new MqttClientFactory().CreateMqttClient();
        var received = new Received(resumed);
        using (resumed)
        {
            var builder = new MqttClientOptionsBuilder().WithTcpServer(target.EndPoint.Address.ToString(), target.EndPoint.Port)
                .WithProtocolVersion(MQTTnet.Formatter.MqttProtocolVersion.V500).WithClientId("resume-id").WithTimeout(MqttBroker.Timeout);
            Persistent(builder);
            using var cts = new CancellationTokenSource(MqttBroker.Timeout);
            var result = await resumed.ConnectAsync(builder.Build(), cts.Token);
            Assert.True(result.IsSessionPresent);

            var away = await received.NextAsync();
            Assert.Equal("away", Encoding.UTF8.GetString(away.Payload));
            Assert.Equal([41u], away.SubscriptionIdentifiers);

            await publisher.PublishAsync("rs/back", "back");
            var copies = await NextAsync(received, 2);
            Assert.Equal(["41", "42"], Identifiers(copies));
        }
    }

    private static async Task SubscribeAsync(IMqttClient client, string filter, MqttQualityOfServiceLevel qos, uint? identifier)
    {
        var builder = new MqttClientSubscribeOptionsBuilder().WithTopicFilter(f => f.WithTopic(filter).WithQualityOfServiceLevel(qos));
        if (identifier is { } id)
        {
            builder.WithSubscriptionIdentifier(id);
        }

        using var cts = new CancellationTokenSource(MqttBroker.Timeout);
        var result = await client.SubscribeAsync(builder.Build(), cts.Token);
        Assert.True((int)result.Items.Single().ResultCode <= 2, $"{filter}: {result.Items.Single().ResultCode}");
    }

    private static async Task<MqttApplicationMessage[]> NextAsync(Received received, int count)
    {
        var messages = new MqttApplicationMessage[count];
        for (var i = 0; i < count; i++)
        {
            messages[i] = await received.NextAsync();
        }

        return messages;
    }

    private static string[] Identifiers(IEnumerable<MqttApplicationMessage> messages)
        => messages.Select(m => string.Join(',', m.SubscriptionIdentifiers ?? [])).Order(StringComparer.Ordinal).ToArray();
}
