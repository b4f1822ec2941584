using System.Text;
using MQTTnet;
using MQTTnet.Protocol;
using NATS.Client.Core;
using NATS.Client.JetStream;
using Broker.TestKit;
using static Broker.Mqtt.Tests.RawMqtt;

namespace Broker.Mqtt.Tests.Mqtt5;

/// <summary>
/// MQTT 5 shared subscriptions at QoS 1 and 2 (section 4.8.2): each message of a <c>$share/&lt;group&gt;/&lt;filter&gt;</c>
/// subscription goes to one member session, at the QoS granted (against the broker and Mosquitto); on the broker one
/// JetStream consumer serves the group for as long as a member's session holds it, and a QoS 1 message a member took and
/// did not acknowledge before its connection closed goes to another member (Mosquitto keeps it for the member); a QoS 2
/// one not PUBREC'd stays with the member's session and is completed when it reconnects (MQTT-4.8.2-4), and goes to no
/// other member, also when the member's session ends (MQTT-4.8.2-5), on the broker and on Mosquitto.
/// </summary>
public sealed class SharedSubscriptionTests
{
    public static TheoryData<Mqtt5Server, MqttQualityOfServiceLevel> ServersAndQos => new()
    {
        { Mqtt5Server.Broker, MqttQualityOfServiceLevel.AtLeastOnce },
        { Mqtt5Server.Broker, MqttQualityOfServiceLevel.ExactlyOnce },
        { Mqtt5Server.Mosquitto, MqttQualityOfServiceLevel.AtLeastOnce },
        { Mqtt5Server.Mosquitto, MqttQualityOfServiceLevel.ExactlyOnce },
    };

    [Theory(Timeout = 60_000)]
    [MemberData(nameof(ServersAndQos))]
    [Trait("Mqtt5", "[MQTT-4.8.2-3]")]
    public async Task SharedSubscription_MQTT_4_8_2_3_each_message_goes_to_one_member_at_the_granted_qos(Mqtt5Server kind, MqttQualityOfServiceLevel qos)
    {
        await using var target = await Mqtt5Target.StartAsync(kind);
        using var first = await target.ConnectAsync("member-1");
        using var second = await target.ConnectAsync("member-2");
        var seen = new System.Collections.Concurrent.ConcurrentQueue<(int Member, MqttApplicationMessage Message)>();
        var members = new[] { first, second };
        for (var m = 0; m < members.Length; m++)
        {
            var member = m;
            members[m].ApplicationMessageReceivedAsync += e =>
            {
                seen.Enqueue((member, e.ApplicationMessage));
                return Task.CompletedTask;
            };
            var granted = await members[m].SubscribeAsync(new MqttClientSubscribeOptionsBuilder().WithTopicFilter(f => f.WithTopic("$share/workers/jobs/+").WithQualityOfServiceLevel(qos)).Build());
            Assert.Equal((int)qos, (int)granted.Items.Single().ResultCode);
        }

        using var publisher = await target.ConnectAsync("jobs-publisher");
        const int count = 20;
        for (var i = 0; i < count; i++)
        {
            await publisher.PublishAsync("jobs/" + i, "job-" + i, qos);
        }

        Assert.True(await Eventually.TrueAsync(() => seen.Count >= count), $"{seen.Count} of {count} jobs delivered");
        // Nothing more comes: no job went to both members.
        await Task.Delay(300);
        Assert.Equal(count, seen.Count);
        Assert.All(seen, s => Assert.Equal(qos, s.Message.QualityOfServiceLevel));
        Assert.Equal(Enumerable.Range(0, count).Select(i => "job-" + i).Order(StringComparer.Ordinal), seen.Select(s => Encoding.UTF8.GetString(s.Message.Payload)).Order(StringComparer.Ordinal));
    }

    [Fact(Timeout = 60_000)]
    [Trait("Mqtt5", "[MQTT-4.8.2]")]
    public async Task SharedSubscription_MQTT_4_8_2_a_qos_1_message_left_unacknowledged_by_a_closed_member_goes_to_another_member()
    {
        await using var target = await Mqtt5Target.StartAsync(Mqtt5Server.Broker);
        using var publisher = await target.ConnectAsync("handover-publisher");
        Received survivorMessages;
        using var survivor = await target.ConnectAsync("survivor");
        await using (var leaving = await target.RawAsync("leaving"))
        {
            await leaving.SendAsync(Packet(0x82, U16(1), [0], Str("$share/pool/handover"), [1]));
            var (subAck, subAckBody) = await leaving.ReadPacketAsync();
            Assert.Equal(0x90, subAck);
            Assert.Equal(1, subAckBody[^1]);

            await publisher.PublishAsync("handover", "only once acknowledged", MqttQualityOfServiceLevel.AtLeastOnce);
            var (publish, _) = await leaving.ReadPacketAsync();
            Assert.Equal(0x32, publish);

            // The survivor joins the group; the message is the leaving member's until its connection closes.
            survivorMessages = new Received(survivor);
            await survivor.SubscribeAsync("$share/pool/handover", MqttQualityOfServiceLevel.AtLeastOnce);
            await survivorMessages.NoneAsync();
        }

        var handed = await survivorMessages.NextAsync();
        Assert.Equal("only once acknowledged", Encoding.UTF8.GetString(handed.Payload));
        Assert.Equal(MqttQualityOfServiceLevel.AtLeastOnce, handed.QualityOfServiceLevel);
        await survivorMessages.NoneAsync();
    }

    [Theory(Timeout = 60_000)]
    [MemberData(nameof(Mqtt5Target.Servers), MemberType = typeof(Mqtt5Target))]
    [Trait("Mqtt5", "[MQTT-4.8.2-4]")]
    public async Task SharedSubscription_MQTT_4_8_2_4_a_qos_2_message_not_pubrecd_is_completed_to_its_member_when_it_reconnects(Mqtt5Server kind)
    {
        await using var group = await Group.StartAsync(kind, "kept");
        var (target, publisher, survivor, survivorMessages) = (group.Target, group.Publisher, group.Survivor, group.SurvivorMessages);
        byte[] expiry = [0x11, 0, 0, 0, 60];
        await using (var leaving = await ConnectAsync(target.EndPoint))
        {
            await leaving.SendAsync(Connect("kept-member", level: 5, flags: 0x02, properties: expiry));
            Assert.Equal(0x20, (await leaving.ReadPacketAsync()).Header);
            await SubscribeAsync(leaving, "$share/q2pool/kept");
            await publisher.PublishAsync("kept", "for its member", MqttQualityOfServiceLevel.ExactlyOnce);
            Assert.Equal(0x34, (await leaving.ReadPacketAsync()).Header);

            // The survivor joins the group; the connection of the member closes before its PUBREC.
            await survivor.SubscribeAsync("$share/q2pool/kept", MqttQualityOfServiceLevel.ExactlyOnce);
        }

        await survivorMessages.NoneAsync(TimeSpan.FromSeconds(2));
        await using var back = await ConnectAsync(target.EndPoint);
        await back.SendAsync(Connect("kept-member", level: 5, flags: 0x00, properties: expiry));
        var (connAck, connAckBody) = await back.ReadPacketAsync();
        Assert.Equal((0x20, 1), (connAck, connAckBody[0])); // session present
        var (type, body) = await back.ReadPacketAsync();
        Assert.Equal(0x3C, type); // QoS 2, DUP
        var (packetId, payload) = PublishV5(body);
        Assert.Equal("for its member", payload);
        await back.SendAsync(0x50, 0x02, (byte)(packetId >> 8), (byte)packetId);
        var (rel, relBody) = await back.ReadPacketAsync();
        Assert.Equal((0x62, packetId), (rel, (ushort)((relBody[0] << 8) | relBody[1])));
        await back.SendAsync(0x70, 0x02, (byte)(packetId >> 8), (byte)packetId);
        await survivorMessages.NoneAsync();
    }

    [Theory(Timeout = 60_000)]
    [MemberData(nameof(Mqtt5Target.Servers), MemberType = typeof(Mqtt5Target))]
    [Trait("Mqtt5", "[MQTT-4.8.2-5]")]
    public async Task SharedSubscription_MQTT_4_8_2_5_a_qos_2_message_of_a_member_whose_session_ended_goes_to_no_other_member(Mqtt5Server kind)
    {
        await using var group = await Group.StartAsync(kind, "ended");
        var (target, publisher, survivor, survivorMessages) = (group.Target, group.Publisher, group.Survivor, group.SurvivorMessages);
        await using (var leaving = await target.RawAsync("ended-member"))
        {
            // Session expiry 0: the session ends with the connection.
            await SubscribeAsync(leaving, "$share/q2ended/gone");
            await publisher.PublishAsync("gone", "not for another member", MqttQualityOfServiceLevel.ExactlyOnce);
            Assert.Equal(0x34, (await leaving.ReadPacketAsync()).Header);
            await survivor.SubscribeAsync("$share/q2ended/gone", MqttQualityOfServiceLevel.ExactlyOnce);
        }

        await survivorMessages.NoneAsync(TimeSpan.FromSeconds(2));

        // The group still works: the next message goes to the survivor.
        await publisher.PublishAsync("gone", "next", MqttQualityOfServiceLevel.ExactlyOnce);
        Assert.Equal("next", Encoding.UTF8.GetString((await survivorMessages.NextAsync()).Payload));
        await survivorMessages.NoneAsync();
    }

    /// <summary>A server with a publisher and a member that stays in the group (the survivor), for the QoS 2 cases.</summary>
    private sealed record Group(Mqtt5Target Target, IMqttClient Publisher, IMqttClient Survivor, Received SurvivorMessages) : IAsyncDisposable
    {
        public static async Task<Group> StartAsync(Mqtt5Server kind, string name)
        {
            var target = await Mqtt5Target.StartAsync(kind);
            var publisher = await target.ConnectAsync(name + "-publisher");
            var survivor = await target.ConnectAsync(name + "-survivor");
            return new Group(target, publisher, survivor, new Received(survivor));
        }

        public async ValueTask DisposeAsync()
        {
            Publisher.Dispose();
            Survivor.Dispose();
            await Target.DisposeAsync();
        }
    }

    private static async Task SubscribeAsync(RawMqtt client, string filter)
    {
        await client.SendAsync(Packet(0x82, U16(1), [0], Str(filter), [2]));
        var (subAck, subAckBody) = await client.ReadPacketAsync();
        Assert.Equal((0x90, 2), (subAck, subAckBody[^1]));
    }

    /// <summary>The packet identifier and payload of an MQTT 5 QoS 1 or 2 PUBLISH body.</summary>
    private static (ushort PacketId, string Payload) PublishV5(byte[] body)
    {
        var index = 2 + ((body[0] << 8) | body[1]);
        var packetId = (ushort)((body[index] << 8) | body[index + 1]);
        index += 2;
        int length = 0, shift = 0;
        while (true)
        {
            var b = body[index++];
            length |= (b & 0x7F) << shift;
            shift += 7;
            if ((b & 0x80) == 0)
            {
                break;
            }
        }

        return (packetId, Encoding.UTF8.GetString(body.AsSpan(index + length)));
    }

    [Fact(Timeout = 60_000)]
    [Trait("Mqtt5", "[MQTT-4.8.2]")]
    public async Task SharedSubscription_one_consumer_serves_the_group_while_a_member_session_holds_it()
    {
        await using var target = await Mqtt5Target.StartAsync(Mqtt5Server.Broker);
        await using var nats = new NatsConnection(new NatsOpts { Url = target.Broker!.Url });
        var js = new NatsJSContext(nats);
        async Task<long> ConsumersAsync() => (await js.GetStreamAsync("$MQTT_msgs")).Info.State.ConsumerCount;
        using var first = await target.ConnectAsync("group-1");
        using var persistent = await target.ConnectAsync("group-2", o => o.WithSessionExpiryInterval(60));
        await first.SubscribeAsync("$share/g/lifetime/#", MqttQualityOfServiceLevel.AtLeastOnce);
        await persistent.SubscribeAsync("$share/g/lifetime/#", MqttQualityOfServiceLevel.ExactlyOnce);
        await persistent.SubscribeAsync("$share/other/lifetime/#", MqttQualityOfServiceLevel.AtLeastOnce);
        Assert.Equal(2, await ConsumersAsync());
        var info = await js.GetConsumerAsync("$MQTT_msgs", (await js.ListConsumerNamesAsync("$MQTT_msgs").ToListAsync()).First(n => n.StartsWith("share_", StringComparison.Ordinal)));
        Assert.False(string.IsNullOrEmpty(info.Info.Config.DeliverGroup));

        await first.UnsubscribeAsync("$share/g/lifetime/#");
        Assert.Equal(2, await ConsumersAsync());

        // A persistent member away keeps its groups' consumers, which keep its messages.
        await persistent.DisconnectAsync(new MqttClientDisconnectOptionsBuilder().WithSessionExpiryInterval(60).Build());
        using var publisher = await target.ConnectAsync("lifetime-publisher");
        await publisher.PublishAsync("lifetime/a", "kept", MqttQualityOfServiceLevel.AtLeastOnce);
        Assert.Equal(2, await ConsumersAsync());

        // Resumed: the kept message, then its unsubscribes release the consumers.
        using var back = new MqttClientFactory().CreateMqttClient();
        var received = new Received(back);
        var options = new MqttClientOptionsBuilder().WithTcpServer(target.EndPoint.Address.ToString(), target.EndPoint.Port)
            .WithProtocolVersion(MQTTnet.Formatter.MqttProtocolVersion.V500).WithClientId("group-2").WithCleanStart(false)
            .WithSessionExpiryInterval(60).WithTimeout(MqttBroker.Timeout).Build();
        using (var cts = new CancellationTokenSource(MqttBroker.Timeout))
        {
            Assert.True((await back.ConnectAsync(options, cts.Token)).IsSessionPresent);
        }

        Assert.Equal("kept", Encoding.UTF8.GetString((await received.NextAsync()).Payload));
        Assert.Equal("kept", Encoding.UTF8.GetString((await received.NextAsync()).Payload));
        await back.UnsubscribeAsync("$share/g/lifetime/#");
        await back.UnsubscribeAsync("$share/other/lifetime/#");
        await Eventually.AssertAsync(async () => await ConsumersAsync() == 0, "the groups' consumers deleted");
    }
}
