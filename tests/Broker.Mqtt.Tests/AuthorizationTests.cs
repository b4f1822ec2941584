using System.Net;
using System.Text;
using System.Text.Json;
using Broker.Core;
using Broker.Core.Auth;
using Broker.TestKit;
using MQTTnet;
using MQTTnet.Formatter;
using MQTTnet.Protocol;
using NATS.Client.Core;

namespace Broker.Mqtt.Tests;

/// <summary>
/// MQTT clients authenticate as the broker's users (the <c>authorization { }</c> NATS clients use) and obey their
/// permissions, and their connections are listed in <c>/connz</c> as type <c>mqtt</c>, as in nats-server.
/// </summary>
public sealed class AuthorizationTests
{
    public static TheoryData<MqttProtocolVersion> Versions => [MqttProtocolVersion.V311, MqttProtocolVersion.V500];

    [Theory(Timeout = 30_000)]
    [MemberData(nameof(Versions))]
    public async Task A_wrong_password_is_refused_with_bad_user_name_or_password(MqttProtocolVersion version)
    {
        await using var broker = await StartAsync();

        Assert.Equal(MqttClientConnectResultCode.BadUserNameOrPassword, await broker.ConnectResultAsync(version, "device", "wrong"));
    }

    [Theory(Timeout = 30_000)]
    [MemberData(nameof(Versions))]
    public async Task Publishes_and_subscriptions_obey_the_users_permissions(MqttProtocolVersion version)
    {
        await using var broker = await StartAsync();
        await using var nats = new NatsConnection(new NatsOpts { Url = broker.Url, AuthOpts = new NatsAuthOpts { Username = "ops", Password = "ops" } });
        await nats.ConnectAsync();
        await using var telemetry = await nats.SubscribeCoreAsync<string>("telemetry.>");
        await nats.PingAsync();

        using var device = await broker.ConnectAsync(version, "meter-1", b => b.WithCredentials("device", "pw"));

        // Subscribe permissions: commands/# is allowed, alerts/# is not (SUBACK failure, or "not authorized" in MQTT 5).
        var subscribed = await device.SubscribeAsync(new MqttClientSubscribeOptionsBuilder()
            .WithTopicFilter(f => f.WithTopic("commands/#"))
            .WithTopicFilter(f => f.WithTopic("alerts/#"))
            .Build());
        Assert.Equal(MqttClientSubscribeResultCode.GrantedQoS0, subscribed.Items.First().ResultCode);
        Assert.Equal(
            version == MqttProtocolVersion.V500 ? MqttClientSubscribeResultCode.NotAuthorized : MqttClientSubscribeResultCode.UnspecifiedError,
            subscribed.Items.Last().ResultCode);

        // Publish permissions: telemetry/secret is denied. MQTT 5 is told so; 3.1.1 is acknowledged, nothing is delivered.
        var forbidden = await device.PublishAsync(new MqttApplicationMessageBuilder().WithTopic("telemetry/secret").WithPayload("x").WithQualityOfServiceLevel(MqttQualityOfServiceLevel.AtLeastOnce).Build());
        Assert.Equal(version == MqttProtocolVersion.V500 ? MqttClientPublishReasonCode.NotAuthorized : MqttClientPublishReasonCode.Success, forbidden.ReasonCode);
        var allowed = await device.PublishAsync(new MqttApplicationMessageBuilder().WithTopic("telemetry/temp").WithPayload("21").WithQualityOfServiceLevel(MqttQualityOfServiceLevel.AtLeastOnce).Build());
        Assert.True(allowed.IsSuccess);

        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(10));
        var first = await telemetry.Msgs.ReadAsync(timeout.Token);
        Assert.Equal("telemetry.temp", first.Subject);
        Assert.Equal("21", first.Data);
    }

    [Theory(Timeout = 30_000)]
    [MemberData(nameof(Versions))]
    public async Task The_mqtt_blocks_no_auth_user_binds_clients_without_credentials(MqttProtocolVersion version)
    {
        // Without the mqtt block's no_auth_user, a client without credentials is refused (the broker has none).
        await using (var plain = await StartAsync())
        {
            Assert.Equal(MqttClientConnectResultCode.NotAuthorized, await plain.ConnectResultAsync(version, null, null));
        }

        await using var broker = await MqttBroker.StartAsync(Configure, ("no_auth_user", "device"));
        using var device = await broker.ConnectAsync(version, "anonymous-meter");

        // Bound to "device": its permissions apply (commands/# allowed, alerts/# refused) and /connz names it.
        var subscribed = await device.SubscribeAsync(new MqttClientSubscribeOptionsBuilder()
            .WithTopicFilter(f => f.WithTopic("commands/#"))
            .WithTopicFilter(f => f.WithTopic("alerts/#"))
            .Build());
        Assert.Equal(MqttClientSubscribeResultCode.GrantedQoS0, subscribed.Items.First().ResultCode);
        Assert.NotEqual(MqttClientSubscribeResultCode.GrantedQoS0, subscribed.Items.Last().ResultCode);
        var connz = await MonitorHttp.GetJsonAsync(broker, "/connz?mqtt_client=anonymous-meter&auth=1");
        Assert.Equal("device", Assert.Single(connz.GetProperty("connections").EnumerateArray()).GetProperty("authorized_user").GetString());

        // Credentials, when given, are still checked as usual.
        Assert.Equal(MqttClientConnectResultCode.BadUserNameOrPassword, await broker.ConnectResultAsync(version, "device", "wrong"));
    }

    [Fact(Timeout = 30_000)]
    public async Task An_mqtt_no_auth_user_that_is_not_a_broker_user_refuses_clients_without_credentials()
    {
        await using var broker = await MqttBroker.StartAsync(Configure, ("no_auth_user", "nobody"));

        Assert.Equal(MqttClientConnectResultCode.NotAuthorized, await broker.ConnectResultAsync(MqttProtocolVersion.V500, null, null));
    }

    [Fact(Timeout = 30_000)]
    public async Task Mqtt_connections_are_listed_in_connz_with_their_user_and_client_id()
    {
        await using var broker = await StartAsync();
        using var device = await broker.ConnectAsync(MqttProtocolVersion.V500, "meter-17", b => b.WithCredentials("device", "pw"));

        var connz = await MonitorHttp.GetJsonAsync(broker, "/connz?mqtt_client=meter-17&auth=1");

        var connection = Assert.Single(connz.GetProperty("connections").EnumerateArray());
        Assert.Equal("mqtt", connection.GetProperty("type").GetString());
        Assert.Equal("meter-17", connection.GetProperty("mqtt_client").GetString());
        Assert.Equal("device", connection.GetProperty("authorized_user").GetString());
    }

    private static Task<TestBroker> StartAsync() => MqttBroker.StartAsync(Configure);

    private static void Configure(BrokerOptions o)
    {
        o.Monitoring.Host = "127.0.0.1";
        o.Monitoring.Port = 0;
        o.Authorization.Users =
        [
            new UserOptions
            {
                User = "device",
                Password = "pw",
                Permissions = new()
                {
                    Publish = new() { Allow = ["telemetry.>"], Deny = ["telemetry.secret"] },
                    // An MQTT filter a/# is the NATS subscriptions a.> and a, as in nats-server: both must be allowed.
                    Subscribe = new() { Allow = ["commands", "commands.>"] },
                },
            },
            new UserOptions { User = "ops", Password = "ops" },
        ];
    }
}
