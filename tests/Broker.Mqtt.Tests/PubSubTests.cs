using System.Text;
using Broker.TestKit;
using MQTTnet;
using MQTTnet.Formatter;
using MQTTnet.Protocol;
using NATS.Client.Core;

namespace Broker.Mqtt.Tests;

/// <summary>MQTT clients (MQTTnet, 3.1.1 and 5) with each other and with NATS clients on one subject space.</summary>
public sealed class PubSubTests
{
    public static TheoryData<MqttProtocolVersion> Versions => [MqttProtocolVersion.V311, MqttProtocolVersion.V500];

    [Theory(Timeout = 30_000)]
    [MemberData(nameof(Versions))]
    public async Task Mqtt_clients_exchange_messages_at_qos_0(MqttProtocolVersion version)
    {
        await using var broker = await MqttBroker.StartAsync();
        using var subscriber = await broker.ConnectAsync(version);
        var received = new Received(subscriber);
        await subscriber.SubscribeAsync("sensors/+/temperature");
        using var publisher = await broker.ConnectAsync(version);

        await publisher.PublishAsync("sensors/kitchen/temperature", "21.5");

        var message = await received.NextAsync();
        Assert.Equal("sensors/kitchen/temperature", message.Topic);
        Assert.Equal("21.5", Encoding.UTF8.GetString(message.Payload));
        Assert.False(message.Retain);
    }

    [Theory(Timeout = 30_000)]
    [MemberData(nameof(Versions))]
    public async Task Mqtt_publishes_reach_nats_subscribers_on_the_mapped_subject(MqttProtocolVersion version)
    {
        await using var broker = await MqttBroker.StartAsync();
        await using var nats = new NatsConnection(new NatsOpts { Url = broker.Url });
        await nats.ConnectAsync();
        await using var subscription = await nats.SubscribeCoreAsync<byte[]>("home.>");
        await nats.PingAsync();
        using var mqtt = await broker.ConnectAsync(version);

        await mqtt.PublishAsync("home/living.room/lamp", "on", MqttQualityOfServiceLevel.AtLeastOnce);

        using var cts = new CancellationTokenSource(MqttBroker.Timeout);
        var message = await subscription.Msgs.ReadAsync(cts.Token);
        Assert.Equal("home.living//room.lamp", message.Subject);
        Assert.Equal("on", Encoding.UTF8.GetString(message.Data!));
        Assert.Equal("1", message.Headers!["Nmqtt-Pub"].ToString());
    }

    [Theory(Timeout = 30_000)]
    [MemberData(nameof(Versions))]
    public async Task Nats_publishes_reach_mqtt_subscribers_without_header_bytes(MqttProtocolVersion version)
    {
        await using var broker = await MqttBroker.StartAsync();
        using var mqtt = await broker.ConnectAsync(version);
        var received = new Received(mqtt);
        await mqtt.SubscribeAsync("orders/#");
        await using var nats = new NatsConnection(new NatsOpts { Url = broker.Url });
        await nats.ConnectAsync();

        await nats.PublishAsync("orders.eu.42", Encoding.UTF8.GetBytes("{\"id\":42}"), new NatsHeaders { ["Trace-Id"] = "abc" });
        await nats.PublishAsync("orders", Encoding.UTF8.GetBytes("parent"));

        var first = await received.NextAsync();
        Assert.Equal("orders/eu/42", first.Topic);
        Assert.Equal("{\"id\":42}", Encoding.UTF8.GetString(first.Payload));
        if (version == MqttProtocolVersion.V500)
        {
            var property = Assert.Single(first.UserProperties!);
            Assert.Equal("Trace-Id", property.Name);
            Assert.Equal("abc", Encoding.UTF8.GetString(property.ValueBuffer.Span));
        }

        // "orders/#" matches "orders" itself: nats-server subscribes the parent subject too.
        var second = await received.NextAsync();
        Assert.Equal("orders", second.Topic);
        Assert.Equal("parent", Encoding.UTF8.GetString(second.Payload));
    }

    [Fact(Timeout = 30_000)]
    public async Task Multi_level_wildcards_do_not_match_dollar_topics()
    {
        await using var broker = await MqttBroker.StartAsync();
        using var subscriber = await broker.ConnectAsync(MqttProtocolVersion.V311);
        var received = new Received(subscriber);
        await subscriber.SubscribeAsync("#");
        using var dollar = await broker.ConnectAsync(MqttProtocolVersion.V311);
        var dollarReceived = new Received(dollar);
        await dollar.SubscribeAsync("$SYS/#");
        using var publisher = await broker.ConnectAsync(MqttProtocolVersion.V311);

        await publisher.PublishAsync("$SYS/uptime", "1");
        await publisher.PublishAsync("plain", "2");

        Assert.Equal("$SYS/uptime", (await dollarReceived.NextAsync()).Topic);
        Assert.Equal("plain", (await received.NextAsync()).Topic);
        await received.NoneAsync();
    }

    [Fact(Timeout = 30_000)]
    public async Task Shared_subscriptions_are_queue_groups_shared_with_nats_clients()
    {
        await using var broker = await MqttBroker.StartAsync();
        using var first = await broker.ConnectAsync(MqttProtocolVersion.V500);
        using var second = await broker.ConnectAsync(MqttProtocolVersion.V311);
        var counts = new int[3];
        first.ApplicationMessageReceivedAsync += _ => { Interlocked.Increment(ref counts[0]); return Task.CompletedTask; };
        second.ApplicationMessageReceivedAsync += _ => { Interlocked.Increment(ref counts[1]); return Task.CompletedTask; };
        await first.SubscribeAsync("$share/workers/jobs/#");
        await second.SubscribeAsync("$share/workers/jobs/#");
        await using var nats = new NatsConnection(new NatsOpts { Url = broker.Url });
        await nats.ConnectAsync();
        await using var natsWorker = await nats.SubscribeCoreAsync<byte[]>("jobs.>", queueGroup: "workers");
        var natsCount = Task.Run(async () =>
        {
            await foreach (var unused in natsWorker.Msgs.ReadAllAsync())
            {
                Interlocked.Increment(ref counts[2]);
            }
        });
        await nats.PingAsync();

        for (var i = 0; i < 300; i++)
        {
            await nats.PublishAsync($"jobs.{i}", Encoding.UTF8.GetBytes("x"));
        }

        Assert.True(await Eventually.TrueAsync(() => counts.Sum() == 300, MqttBroker.Timeout));
        Assert.All(counts, count => Assert.InRange(count, 1, 299));
        await Task.Delay(200);
        Assert.Equal(300, counts.Sum());
    }

    [Fact(Timeout = 30_000)]
    public async Task Mqtt5_properties_travel_as_nats_headers_and_back()
    {
        await using var broker = await MqttBroker.StartAsync();
        using var subscriber = await broker.ConnectAsync(MqttProtocolVersion.V500);
        var received = new Received(subscriber);
        await subscriber.SubscribeAsync("props/#");
        await using var nats = new NatsConnection(new NatsOpts { Url = broker.Url });
        await nats.ConnectAsync();
        await using var natsSubscription = await nats.SubscribeCoreAsync<byte[]>("props.>");
        await nats.PingAsync();
        using var publisher = await broker.ConnectAsync(MqttProtocolVersion.V500);

        await publisher.PublishAsync(new MqttApplicationMessageBuilder()
            .WithTopic("props/a")
            .WithPayload("{}")
            .WithContentType("application/json")
            .WithPayloadFormatIndicator(MqttPayloadFormatIndicator.CharacterData)
            .WithMessageExpiryInterval(120)
            .WithUserProperty("region", "eu"u8.ToArray().AsMemory())
            .WithUserProperty("region", "us"u8.ToArray().AsMemory())
            .Build());

        using var cts = new CancellationTokenSource(MqttBroker.Timeout);
        var natsMessage = await natsSubscription.Msgs.ReadAsync(cts.Token);
        Assert.Equal("application/json", natsMessage.Headers!["Content-Type"].ToString());
        Assert.Equal(new[] { "eu", "us" }, natsMessage.Headers!["region"].Select(v => v ?? string.Empty).ToArray());

        var message = await received.NextAsync();
        Assert.Equal("application/json", message.ContentType);
        Assert.Equal(MqttPayloadFormatIndicator.CharacterData, message.PayloadFormatIndicator);
        Assert.Equal(120u, message.MessageExpiryInterval);
        Assert.Equal(["region=eu", "region=us"], message.UserProperties!.Select(p => p.Name + "=" + Encoding.UTF8.GetString(p.ValueBuffer.Span)).ToArray());
    }

    [Fact(Timeout = 30_000)]
    public async Task Nats_requests_are_answered_by_an_mqtt5_responder()
    {
        await using var broker = await MqttBroker.StartAsync();
        using var responder = await broker.ConnectAsync(MqttProtocolVersion.V500);
        responder.ApplicationMessageReceivedAsync += async e =>
        {
            var request = e.ApplicationMessage;
            await responder.PublishAsync(new MqttApplicationMessageBuilder()
                .WithTopic(request.ResponseTopic)
                .WithPayload("pong:" + Encoding.UTF8.GetString(request.Payload))
                .WithCorrelationData(request.CorrelationData)
                .Build());
        };
        await responder.SubscribeAsync("rpc/ping");
        await using var nats = new NatsConnection(new NatsOpts { Url = broker.Url });
        await nats.ConnectAsync();

        var reply = await nats.RequestAsync<string, string>("rpc.ping", "1", replyOpts: new NatsSubOpts { Timeout = MqttBroker.Timeout });

        Assert.Equal("pong:1", reply.Data);
    }

    [Fact(Timeout = 30_000)]
    public async Task Mqtt5_requests_with_correlation_data_are_answered_by_a_nats_responder()
    {
        await using var broker = await MqttBroker.StartAsync();
        await using var nats = new NatsConnection(new NatsOpts { Url = broker.Url });
        await nats.ConnectAsync();
        await using var service = await nats.SubscribeCoreAsync<string>("rpc.add");
        var serve = Task.Run(async () =>
        {
            await foreach (var request in service.Msgs.ReadAllAsync())
            {
                await request.ReplyAsync("sum:" + request.Data);
            }
        });
        await nats.PingAsync();
        using var requester = await broker.ConnectAsync(MqttProtocolVersion.V500);
        var received = new Received(requester);
        await requester.SubscribeAsync("replies/me");

        await requester.PublishAsync(new MqttApplicationMessageBuilder()
            .WithTopic("rpc/add")
            .WithPayload("1+2")
            .WithResponseTopic("replies/me")
            .WithCorrelationData([7, 7, 7])
            .Build());

        var reply = await received.NextAsync();
        Assert.Equal("replies/me", reply.Topic);
        Assert.Equal("sum:1+2", Encoding.UTF8.GetString(reply.Payload));
        Assert.Equal([7, 7, 7], reply.CorrelationData);
    }

    [Fact(Timeout = 30_000)]
    public async Task No_local_subscriptions_do_not_receive_their_own_publishes()
    {
        await using var broker = await MqttBroker.StartAsync();
        using var client = await broker.ConnectAsync(MqttProtocolVersion.V500);
        var received = new Received(client);
        await client.SubscribeAsync(new MqttClientSubscribeOptionsBuilder().WithTopicFilter(f => f.WithTopic("chat").WithNoLocal()).Build());
        using var other = await broker.ConnectAsync(MqttProtocolVersion.V500);

        await client.PublishAsync("chat", "mine");
        await other.PublishAsync("chat", "theirs");

        Assert.Equal("theirs", Encoding.UTF8.GetString((await received.NextAsync()).Payload));
        await received.NoneAsync();
    }

    [Theory(Timeout = 30_000)]
    [MemberData(nameof(Versions))]
    public async Task Retained_messages_are_set_replaced_cleared_and_sent_to_new_subscribers(MqttProtocolVersion version)
    {
        await using var broker = await MqttBroker.StartAsync();
        using var publisher = await broker.ConnectAsync(version);
        await publisher.PublishAsync("status/a", "one", retain: true);
        await publisher.PublishAsync("status/a", "two", retain: true);
        await publisher.PublishAsync("status/b", "gone", retain: true);
        await publisher.PublishAsync("status/b", "", retain: true);
        // QoS 1: its PUBACK means the broker processed everything this client sent before.
        await publisher.PublishAsync("status/c/d", "deep", MqttQualityOfServiceLevel.AtLeastOnce, retain: true);

        using var subscriber = await broker.ConnectAsync(version);
        var received = new Received(subscriber);
        await subscriber.SubscribeAsync("status/#");

        var messages = new[] { await received.NextAsync(), await received.NextAsync() }.OrderBy(m => m.Topic).ToArray();
        Assert.Equal(["status/a", "status/c/d"], messages.Select(m => m.Topic).ToArray());
        Assert.Equal("two", Encoding.UTF8.GetString(messages[0].Payload));
        Assert.All(messages, m => Assert.True(m.Retain));
        await received.NoneAsync();

        // Live messages to existing subscribers carry no RETAIN flag (MQTT-3.3.1-9).
        await publisher.PublishAsync("status/a", "three", retain: true);
        var live = await received.NextAsync();
        Assert.False(live.Retain);
    }

    [Fact(Timeout = 30_000)]
    public async Task Topic_aliases_are_used_towards_clients_that_accept_them()
    {
        await using var broker = await MqttBroker.StartAsync();
        using var subscriber = await broker.ConnectAsync(MqttProtocolVersion.V500, configure: b => b.WithTopicAliasMaximum(4));
        var received = new Received(subscriber);
        await subscriber.SubscribeAsync("alias/#");
        using var publisher = await broker.ConnectAsync(MqttProtocolVersion.V500);

        for (var i = 0; i < 3; i++)
        {
            await publisher.PublishAsync("alias/long/topic/name", i.ToString(System.Globalization.CultureInfo.InvariantCulture));
        }

        // MQTTnet 5.2 hands aliased messages over unresolved: the topic comes once, then the alias alone.
        var first = await received.NextAsync();
        Assert.Equal("alias/long/topic/name", first.Topic);
        Assert.NotEqual(0, first.TopicAlias);
        for (var i = 1; i < 3; i++)
        {
            var message = await received.NextAsync();
            Assert.True(string.IsNullOrEmpty(message.Topic));
            Assert.Equal(first.TopicAlias, message.TopicAlias);
            Assert.Equal(i.ToString(System.Globalization.CultureInfo.InvariantCulture), Encoding.UTF8.GetString(message.Payload));
        }
    }
}
