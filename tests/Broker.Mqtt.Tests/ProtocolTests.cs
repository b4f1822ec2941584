using System.Text;
using Broker.TestKit;
using MQTTnet;
using MQTTnet.Formatter;
using static Broker.Mqtt.Tests.RawMqtt;

namespace Broker.Mqtt.Tests;

/// <summary>CONNECT, keep alive, takeover and the protocol-violation closes, at the byte level where bytes matter.</summary>
public sealed class ProtocolTests
{
    [Fact(Timeout = 30_000)]
    public async Task Connack_311_accepts_a_clean_session()
    {
        await using var broker = await MqttBroker.StartAsync();
        await using var raw = await ConnectAsync(broker.MqttEndPoint());
        await raw.SendAsync(Connect("c1"));
        var (header, body) = await raw.ReadPacketAsync();
        Assert.Equal(0x20, header);
        Assert.Equal(new byte[] { 0, 0 }, body);
        await raw.SendAsync(0xC0, 0x00);
        Assert.Equal(0xD0, (await raw.ReadPacketAsync()).Header);
    }

    [Fact(Timeout = 30_000)]
    public async Task Empty_client_id_needs_a_clean_session_in_311()
    {
        await using var broker = await MqttBroker.StartAsync();
        await using var raw = await ConnectAsync(broker.MqttEndPoint());
        await raw.SendAsync(Connect("", flags: 0x00));
        var (header, body) = await raw.ReadPacketAsync();
        Assert.Equal(0x20, header);
        Assert.Equal(new byte[] { 0, 2 }, body);
        Assert.True(await raw.ClosedAsync());
    }

    [Fact(Timeout = 30_000)]
    public async Task Mqtt5_empty_client_id_gets_an_assigned_identifier()
    {
        await using var broker = await MqttBroker.StartAsync();
        using var client = new MqttClientFactory().CreateMqttClient();
        var result = await client.ConnectAsync(new MqttClientOptionsBuilder().WithTcpServer("127.0.0.1", broker.MqttPort())
            .WithProtocolVersion(MqttProtocolVersion.V500).WithClientId("").WithCleanStart().Build());
        Assert.Equal(22, result.AssignedClientIdentifier.Length);
        Assert.Equal((ushort)1024, result.ReceiveMaximum);
        Assert.Equal((ushort)64, result.TopicAliasMaximum);
        Assert.True(result.MaximumPacketSize > 1024 * 1024);
    }

    [Theory(Timeout = 30_000)]
    [InlineData("MQIsdp", 3)]
    [InlineData("MQTT", 3)]
    [InlineData("MQTT", 6)]
    public async Task Unsupported_protocol_levels_get_return_code_1(string name, byte level)
    {
        await using var broker = await MqttBroker.StartAsync();
        broker.ExpectErrors();
        await using var raw = await ConnectAsync(broker.MqttEndPoint());
        await raw.SendAsync(Packet(0x10, Str(name), [level, 0x02], U16(60), Str("c")));
        var (header, body) = await raw.ReadPacketAsync();
        Assert.Equal(0x20, header);
        Assert.Equal(new byte[] { 0, 1 }, body);
        Assert.True(await raw.ClosedAsync());
    }

    [Fact(Timeout = 30_000)]
    public async Task A_first_packet_other_than_connect_closes_the_connection()
    {
        await using var broker = await MqttBroker.StartAsync();
        await using var raw = await ConnectAsync(broker.MqttEndPoint());
        await raw.SendAsync(0xC0, 0x00);
        Assert.True(await raw.ClosedAsync());
        Assert.Empty(raw.Unread);
    }

    [Fact(Timeout = 30_000)]
    public async Task A_second_connect_closes_the_connection()
    {
        await using var broker = await MqttBroker.StartAsync();
        await using var raw = await ConnectedAsync(broker.MqttEndPoint(), "twice");
        await raw.SendAsync(Connect("twice"));
        Assert.True(await raw.ClosedAsync());
        Assert.True(broker.Logs.Contains("received a second CONNECT packet"));
    }

    [Fact(Timeout = 30_000)]
    public async Task Reserved_connect_flag_closes_without_connack()
    {
        await using var broker = await MqttBroker.StartAsync();
        await using var raw = await ConnectAsync(broker.MqttEndPoint());
        await raw.SendAsync(Connect("c", flags: 0x03));
        Assert.True(await raw.ClosedAsync());
        Assert.Empty(raw.Unread);
    }

    [Fact(Timeout = 30_000)]
    public async Task Oversized_remaining_length_closes_at_once_and_affects_no_one_else()
    {
        await using var broker = await MqttBroker.StartAsync(("max_packet_size", "4096"));
        using var bystander = await broker.ConnectAsync(MqttProtocolVersion.V311);
        var received = new Received(bystander);
        await bystander.SubscribeAsync("still/alive");
        await using var raw = await ConnectedAsync(broker.MqttEndPoint(), "big");

        // A PUBLISH announcing 200 MB: refused from its header, nothing of the body is awaited.
        await raw.SendAsync(0x30, 0x80, 0x80, 0x80, 0x60);
        Assert.True(await raw.ClosedAsync(TimeSpan.FromSeconds(5)));

        using var publisher = await broker.ConnectAsync(MqttProtocolVersion.V311);
        await publisher.PublishAsync("still/alive", "yes");
        Assert.Equal("yes", Encoding.UTF8.GetString((await received.NextAsync()).Payload));
    }

    [Fact(Timeout = 30_000)]
    public async Task Mqtt5_packet_too_large_gets_disconnect_0x95()
    {
        await using var broker = await MqttBroker.StartAsync(("max_packet_size", "4096"));
        await using var raw = await ConnectedAsync(broker.MqttEndPoint(), "big5", level: 5);
        await raw.SendAsync(Packet(0x30, Str("t"), [0], new byte[5000]));
        var (header, body) = await raw.ReadPacketAsync();
        Assert.Equal(0xE0, header);
        Assert.Equal(0x95, body[0]);
        Assert.True(await raw.ClosedAsync());
    }

    [Fact(Timeout = 30_000)]
    public async Task Malformed_remaining_length_closes_the_connection()
    {
        await using var broker = await MqttBroker.StartAsync();
        await using var raw = await ConnectedAsync(broker.MqttEndPoint(), "varint");
        await raw.SendAsync(0x30, 0xFF, 0xFF, 0xFF, 0xFF, 0x01);
        Assert.True(await raw.ClosedAsync());
    }

    [Theory(Timeout = 30_000)]
    [InlineData(new byte[] { 0x82, 0x05, 0x00, 0x01, 0x00, 0x00, 0x00 })] // SUBSCRIBE with an empty filter
    [InlineData(new byte[] { 0x80, 0x06, 0x00, 0x01, 0x00, 0x01, (byte)'a', 0x00 })] // SUBSCRIBE with flags 0
    [InlineData(new byte[] { 0x36, 0x03, 0x00, 0x01, (byte)'a' })] // PUBLISH with QoS 3
    [InlineData(new byte[] { 0x30, 0x04, 0x00, 0x03, (byte)'a', (byte)'/' })] // topic length beyond the packet
    [InlineData(new byte[] { 0x32, 0x05, 0x00, 0x01, (byte)'a', 0x00, 0x00 })] // QoS 1 with packet id 0
    [InlineData(new byte[] { 0x30, 0x05, 0x00, 0x03, (byte)'a', (byte)'/', (byte)'#' })] // wildcard in a topic name
    [InlineData(new byte[] { 0xF0, 0x00 })] // AUTH
    [InlineData(new byte[] { 0x20, 0x02, 0x00, 0x00 })] // CONNACK from a client
    public async Task Malformed_packets_close_the_connection(byte[] packet)
    {
        await using var broker = await MqttBroker.StartAsync();
        await using var raw = await ConnectedAsync(broker.MqttEndPoint(), "malformed");
        await raw.SendAsync(packet);
        Assert.True(await raw.ClosedAsync());
    }

    [Fact(Timeout = 30_000)]
    public async Task Keep_alive_closes_a_silent_client_after_one_and_a_half_intervals()
    {
        await using var broker = await MqttBroker.StartAsync();
        await using var raw = await ConnectAsync(broker.MqttEndPoint());
        await raw.SendAsync(Connect("sleepy", keepAlive: 1));
        await raw.ReadPacketAsync();
        var started = DateTime.UtcNow;
        Assert.True(await raw.ClosedAsync(TimeSpan.FromSeconds(5)));
        Assert.InRange(DateTime.UtcNow - started, TimeSpan.FromSeconds(1.2), TimeSpan.FromSeconds(4));
    }

    [Fact(Timeout = 30_000)]
    public async Task No_connect_within_the_timeout_closes_the_connection()
    {
        await using var broker = await MqttBroker.StartAsync(("authorization:timeout", "0.5"));
        await using var raw = await ConnectAsync(broker.MqttEndPoint());
        Assert.True(await raw.ClosedAsync(TimeSpan.FromSeconds(5)));
    }

    [Fact(Timeout = 30_000)]
    public async Task A_second_connection_with_the_same_client_id_takes_the_session_over()
    {
        await using var broker = await MqttBroker.StartAsync();
        await using var first = await ConnectedAsync(broker.MqttEndPoint(), "same", level: 5);
        await using var second = await ConnectedAsync(broker.MqttEndPoint(), "same", level: 5);
        var (header, body) = await first.ReadPacketAsync();
        Assert.Equal(0xE0, header);
        Assert.Equal(0x8E, body[0]);
        Assert.True(await first.ClosedAsync());
        await second.SendAsync(0xC0, 0x00);
        Assert.Equal(0xD0, (await second.ReadPacketAsync()).Header);
    }

    [Fact(Timeout = 30_000)]
    public async Task Username_and_password_of_the_mqtt_block_are_checked()
    {
        await using var broker = await MqttBroker.StartAsync(("authorization:username", "dev"), ("authorization:password", "s3cret"));
        using var good = await broker.ConnectAsync(MqttProtocolVersion.V311, configure: b => b.WithCredentials("dev", "s3cret"));
        Assert.True(good.IsConnected);

        Assert.Equal(MqttClientConnectResultCode.BadUserNameOrPassword, await broker.ConnectResultAsync(MqttProtocolVersion.V500, "dev", "wrong"));
    }

    [Fact(Timeout = 30_000)]
    public async Task Persistent_sessions_keep_their_subscriptions_across_reconnects()
    {
        await using var broker = await MqttBroker.StartAsync();
        using (var first = await broker.ConnectAsync(MqttProtocolVersion.V311, "durable", b => b.WithCleanSession(false)))
        {
            await first.SubscribeAsync("kept/topic");
            await first.DisconnectAsync();
        }

        using var again = new MqttClientFactory().CreateMqttClient();
        var received = new Received(again);
        var result = await again.ConnectAsync(new MqttClientOptionsBuilder().WithTcpServer("127.0.0.1", broker.MqttPort())
            .WithProtocolVersion(MqttProtocolVersion.V311).WithClientId("durable").WithCleanSession(false).Build());
        Assert.True(result.IsSessionPresent);
        using var publisher = await broker.ConnectAsync(MqttProtocolVersion.V311);
        await publisher.PublishAsync("kept/topic", "still subscribed");
        Assert.Equal("still subscribed", Encoding.UTF8.GetString((await received.NextAsync()).Payload));
    }

    [Fact(Timeout = 30_000)]
    public async Task Will_is_published_on_an_ungraceful_close_only()
    {
        await using var broker = await MqttBroker.StartAsync();
        using var watcher = await broker.ConnectAsync(MqttProtocolVersion.V500);
        var received = new Received(watcher);
        await watcher.SubscribeAsync("wills/#");

        using (var polite = await broker.ConnectAsync(MqttProtocolVersion.V500, configure: b => b.WithWillTopic("wills/polite").WithWillPayload("bye")))
        {
            await polite.DisconnectAsync();
        }

        await using (var raw = await ConnectAsync(broker.MqttEndPoint()))
        {
            // CONNECT 3.1.1 with a will (flags: clean + will) on wills/crash.
            await raw.SendAsync(Packet(0x10, Str("MQTT"), [4, 0x06], U16(60), Str("crasher"), Str("wills/crash"), Str("gone")));
            await raw.ReadPacketAsync();
        }

        var will = await received.NextAsync();
        Assert.Equal("wills/crash", will.Topic);
        Assert.Equal("gone", Encoding.UTF8.GetString(will.Payload));
        await received.NoneAsync();
    }

    [Fact(Timeout = 30_000)]
    public async Task Qos2_publishes_are_delivered_once_and_completed()
    {
        await using var broker = await MqttBroker.StartAsync();
        using var subscriber = await broker.ConnectAsync(MqttProtocolVersion.V311);
        var received = new Received(subscriber);
        await subscriber.SubscribeAsync("exact");
        await using var raw = await ConnectedAsync(broker.MqttEndPoint(), "q2");
        var publish = Packet(0x34, Str("exact"), U16(9), "once"u8.ToArray());

        await raw.SendAsync(publish);
        await ExpectAsync(raw, 0x50, [0, 9]);
        await raw.SendAsync([(byte)(publish[0] | 0x08), .. publish[1..]]); // resent with DUP before PUBREL
        await ExpectAsync(raw, 0x50, [0, 9]);
        await raw.SendAsync(0x62, 0x02, 0x00, 0x09);
        await ExpectAsync(raw, 0x70, [0, 9]);

        Assert.Equal("once", Encoding.UTF8.GetString((await received.NextAsync()).Payload));
        await received.NoneAsync();
    }

    [Fact(Timeout = 30_000)]
    public async Task Mqtt5_inbound_topic_aliases_stand_for_their_topic()
    {
        await using var broker = await MqttBroker.StartAsync();
        using var subscriber = await broker.ConnectAsync(MqttProtocolVersion.V311);
        var received = new Received(subscriber);
        await subscriber.SubscribeAsync("aliased/topic");
        await using var raw = await ConnectedAsync(broker.MqttEndPoint(), "alias-user", level: 5);

        await raw.SendAsync(Packet(0x30, Str("aliased/topic"), [3, 0x23, 0, 1], "1"u8.ToArray()));
        await raw.SendAsync(Packet(0x30, Str(""), [3, 0x23, 0, 1], "2"u8.ToArray()));

        Assert.Equal("1", Encoding.UTF8.GetString((await received.NextAsync()).Payload));
        var second = await received.NextAsync();
        Assert.Equal("aliased/topic", second.Topic);
        Assert.Equal("2", Encoding.UTF8.GetString(second.Payload));
    }

    [Fact(Timeout = 30_000)]
    public async Task Messages_larger_than_the_clients_maximum_packet_size_are_not_sent_to_it()
    {
        await using var broker = await MqttBroker.StartAsync();
        using var small = await broker.ConnectAsync(MqttProtocolVersion.V500, configure: b => b.WithMaximumPacketSize(100));
        var received = new Received(small);
        await small.SubscribeAsync("sized");
        using var publisher = await broker.ConnectAsync(MqttProtocolVersion.V500);

        await publisher.PublishAsync("sized", new string('x', 200));
        await publisher.PublishAsync("sized", "fits");

        Assert.Equal("fits", Encoding.UTF8.GetString((await received.NextAsync()).Payload));
    }

    private static async Task ExpectAsync(RawMqtt raw, byte header, byte[] body)
    {
        var packet = await raw.ReadPacketAsync();
        Assert.Equal(header, packet.Header);
        Assert.Equal(body, packet.Body);
    }
}
