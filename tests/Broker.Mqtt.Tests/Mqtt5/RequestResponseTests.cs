using System.Text;
using MQTTnet;
using MQTTnet.Protocol;
using NATS.Client.Core;

namespace Broker.Mqtt.Tests.Mqtt5;

/// <summary>
/// MQTT 5 request/response (section 4.10): Response Topic and Correlation Data reach MQTT responders unaltered
/// (MQTT-3.3.2-15, -3.3.2-16), against the broker and Mosquitto; and on the broker they map to NATS reply subjects and
/// back, so NATS.Client.Core requesters and responders take part both ways.
/// </summary>
public sealed class RequestResponseTests
{
    [Theory(Timeout = 60_000)]
    [MemberData(nameof(Mqtt5Target.Servers), MemberType = typeof(Mqtt5Target))]
    [Trait("Mqtt5", "[MQTT-3.3.2-15]")]
    [Trait("Mqtt5", "[MQTT-3.3.2-16]")]
    public async Task RequestResponse_MQTT_3_3_2_15_and_16_response_topic_and_correlation_reach_an_mqtt_responder_unaltered(Mqtt5Server kind)
    {
        await using var target = await Mqtt5Target.StartAsync(kind);
        using var responder = await target.ConnectAsync("responder");
        var requests = new Received(responder);
        await responder.SubscribeAsync("svc/+", MqttQualityOfServiceLevel.AtLeastOnce);
        using var requester = await target.ConnectAsync("requester");
        var replies = new Received(requester);
        await requester.SubscribeAsync("answers/requester", MqttQualityOfServiceLevel.AtLeastOnce);

        foreach (var qos in new[] { MqttQualityOfServiceLevel.AtMostOnce, MqttQualityOfServiceLevel.AtLeastOnce })
        {
            await requester.PublishAsync(new MqttApplicationMessageBuilder()
                .WithTopic("svc/echo")
                .WithPayload("ping-" + (int)qos)
                .WithQualityOfServiceLevel(qos)
                .WithResponseTopic("answers/requester")
                .WithCorrelationData([0, 1, 2, (byte)qos])
                .Build());

            var request = await requests.NextAsync();
            Assert.Equal("answers/requester", request.ResponseTopic);
            Assert.Equal([0, 1, 2, (byte)qos], request.CorrelationData);
            Assert.Null(request.UserProperties);
            await responder.PublishAsync(new MqttApplicationMessageBuilder()
                .WithTopic(request.ResponseTopic)
                .WithPayload("pong-" + (int)qos)
                .WithCorrelationData(request.CorrelationData)
                .Build());

            var reply = await replies.NextAsync();
            Assert.Equal("pong-" + (int)qos, Encoding.UTF8.GetString(reply.Payload));
            Assert.Equal([0, 1, 2, (byte)qos], reply.CorrelationData);
            Assert.Null(reply.UserProperties);
        }

        // One answer each: an MQTT responder answering the response topic is not also relayed.
        await replies.NoneAsync();
    }

    [Theory(Timeout = 60_000)]
    [MemberData(nameof(Mqtt5Target.Servers), MemberType = typeof(Mqtt5Target))]
    [Trait("Mqtt5", "[MQTT-3.3.2-15]")]
    public async Task RequestResponse_MQTT_3_3_2_15_a_response_topic_without_correlation_data_reaches_the_responder(Mqtt5Server kind)
    {
        await using var target = await Mqtt5Target.StartAsync(kind);
        using var responder = await target.ConnectAsync("plain-responder");
        var requests = new Received(responder);
        await responder.SubscribeAsync("plain/svc");
        using var requester = await target.ConnectAsync("plain-requester");

        await requester.PublishAsync(new MqttApplicationMessageBuilder().WithTopic("plain/svc").WithPayload("q").WithResponseTopic("plain/answers/1").Build());

        var request = await requests.NextAsync();
        Assert.Equal("plain/answers/1", request.ResponseTopic);
        Assert.Null(request.CorrelationData);
    }

    [Fact(Timeout = 60_000)]
    [Trait("Mqtt5", "[MQTT-4.10]")]
    public async Task RequestResponse_an_mqtt5_request_without_correlation_data_is_answered_by_a_nats_responder_on_the_response_topic()
    {
        await using var target = await Mqtt5Target.StartAsync(Mqtt5Server.Broker);
        await using var nats = new NatsConnection(new NatsOpts { Url = target.Broker!.Url });
        await using var service = await nats.SubscribeCoreAsync<string>("calc.double");
        var serve = ServeAsync(service, request => request.ReplyAsync(request.Data + request.Data, headers: new NatsHeaders { ["served-by"] = "nats" }));
        await nats.PingAsync();
        using var requester = await target.ConnectAsync("nats-plain-requester");
        var replies = new Received(requester);
        await requester.SubscribeAsync("calc/answers/+");

        await requester.PublishAsync(new MqttApplicationMessageBuilder().WithTopic("calc/double").WithPayload("21").WithResponseTopic("calc/answers/7").Build());

        var reply = await replies.NextAsync();
        Assert.Equal("calc/answers/7", reply.Topic);
        Assert.Equal("2121", Encoding.UTF8.GetString(reply.Payload));
        Assert.Null(reply.CorrelationData);
        Assert.Equal("served-by=nats", string.Join(';', reply.UserProperties!.Select(p => p.Name + "=" + Encoding.UTF8.GetString(p.ValueBuffer.Span))));
        await service.UnsubscribeAsync();
        await serve;
    }

    [Fact(Timeout = 60_000)]
    [Trait("Mqtt5", "[MQTT-4.10]")]
    public async Task RequestResponse_mqtt5_requests_in_flight_at_once_each_get_their_own_correlation_data_from_a_nats_responder()
    {
        await using var target = await Mqtt5Target.StartAsync(Mqtt5Server.Broker);
        await using var nats = new NatsConnection(new NatsOpts { Url = target.Broker!.Url });
        await using var service = await nats.SubscribeCoreAsync<string>("calc.neg");
        var serve = ServeAsync(service, request => request.ReplyAsync("-" + request.Data, headers: new NatsHeaders { ["served-by"] = "nats" }));
        await nats.PingAsync();
        using var requester = await target.ConnectAsync("nats-many-requester");
        var replies = new Received(requester);
        await requester.SubscribeAsync("calc/mine", MqttQualityOfServiceLevel.AtLeastOnce);

        for (var i = 0; i < 20; i++)
        {
            await requester.PublishAsync(new MqttApplicationMessageBuilder()
                .WithTopic("calc/neg")
                .WithPayload(i.ToString(System.Globalization.CultureInfo.InvariantCulture))
                .WithQualityOfServiceLevel(i % 2 == 0 ? MqttQualityOfServiceLevel.AtMostOnce : MqttQualityOfServiceLevel.AtLeastOnce)
                .WithResponseTopic("calc/mine")
                .WithCorrelationData(Encoding.UTF8.GetBytes("c" + i))
                .Build());
        }

        var answers = new List<string>();
        for (var i = 0; i < 20; i++)
        {
            var reply = await replies.NextAsync();
            Assert.Equal("calc/mine", reply.Topic);
            answers.Add(Encoding.UTF8.GetString(reply.CorrelationData) + "=" + Encoding.UTF8.GetString(reply.Payload));
            // The responder's headers arrive as user properties; the adapter's own headers never do.
            Assert.Equal(["served-by"], reply.UserProperties!.Select(p => p.Name).ToArray());
        }

        Assert.Equal(Enumerable.Range(0, 20).Select(i => "c" + i + "=-" + i).Order(StringComparer.Ordinal), answers.Order(StringComparer.Ordinal));
        await replies.NoneAsync();
        await service.UnsubscribeAsync();
        await serve;
    }

    [Fact(Timeout = 60_000)]
    [Trait("Mqtt5", "[MQTT-4.10]")]
    public async Task RequestResponse_a_nats_requester_gets_its_reply_from_an_mqtt5_responder_with_headers_as_user_properties()
    {
        await using var target = await Mqtt5Target.StartAsync(Mqtt5Server.Broker);
        using var responder = await target.ConnectAsync("mqtt-responder");
        responder.ApplicationMessageReceivedAsync += async e =>
        {
            var request = e.ApplicationMessage;
            var kind = request.UserProperties?.FirstOrDefault(p => p.Name == "kind");
            await responder.PublishAsync(new MqttApplicationMessageBuilder()
                .WithTopic(request.ResponseTopic)
                .WithPayload("upper:" + Encoding.UTF8.GetString(request.Payload).ToUpperInvariant())
                .WithUserProperty("kind-was", (kind is null ? "none"u8.ToArray() : kind.ValueBuffer.ToArray()).AsMemory())
                .WithQualityOfServiceLevel(MqttQualityOfServiceLevel.AtLeastOnce)
                .Build());
        };
        await responder.SubscribeAsync("text/upper", MqttQualityOfServiceLevel.AtLeastOnce);
        await using var nats = new NatsConnection(new NatsOpts { Url = target.Broker!.Url });

        for (var i = 0; i < 5; i++)
        {
            var reply = await nats.RequestAsync<string, string>(
                "text.upper",
                "abc" + i,
                headers: new NatsHeaders { ["kind"] = "test" },
                replyOpts: new NatsSubOpts { Timeout = MqttBroker.Timeout });
            Assert.Equal("upper:ABC" + i, reply.Data);
            Assert.Equal("test", reply.Headers!["kind-was"].ToString());
        }
    }

    private static Task ServeAsync(INatsSub<string> service, Func<NatsMsg<string>, ValueTask> answer) => Task.Run(async () =>
    {
        await foreach (var request in service.Msgs.ReadAllAsync())
        {
            await answer(request);
        }
    });
}
