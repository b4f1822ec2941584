using System.Buffers;
using System.Text;
using System.Threading.Channels;
using Broker.Abstractions;
using Broker.Core;
using Broker.Core.Auth;
using Broker.JetStream;
using Broker.Storage.MemStore;
using Broker.TestKit;
using MQTTnet;
using MQTTnet.Formatter;
using MQTTnet.Protocol;
using NATS.Client.Core;

namespace Broker.Mqtt.Tests;

/// <summary>
/// MQTT clients in broker accounts: publishes and subscriptions stay in the client's account, and, until the MQTT state
/// is kept per account, a client outside <c>$G</c> that asks for state at CONNECT (persistent session, retained or QoS
/// 1/2 will) is refused with "server unavailable", its QoS 1/2 subscriptions are granted QoS 0 and a retained PUBLISH
/// closes it.
/// </summary>
public sealed class AccountTests : IDisposable
{
    public static TheoryData<MqttProtocolVersion> Versions => [MqttProtocolVersion.V311, MqttProtocolVersion.V500];

    private static readonly TimeSpan Wait = TimeSpan.FromSeconds(10);

    private readonly TempDirectory storeDirectory = new("mqtt-accounts-");

    public void Dispose() => storeDirectory.Dispose();

    private static void TwoAccounts(BrokerOptions options)
    {
        options.Accounts = [new AccountOptions { Name = "A" }, new AccountOptions { Name = "B" }];
        options.Monitoring.Host = "127.0.0.1";
        options.Monitoring.Port = 0;
    }

    /// <summary>The mqtt block's own user, vouched for by the adapter into account B (<c>authorization { account: B }</c>).</summary>
    private static readonly (string, string?)[] DevicesInB = [("authorization:user", "dev"), ("authorization:password", "pw"), ("authorization:account", "B")];

    [Theory(Timeout = 60_000)]
    [MemberData(nameof(Versions))]
    public async Task A_client_the_adapter_puts_in_B_sees_and_reaches_only_B(MqttProtocolVersion version)
    {
        await using var broker = await MqttBroker.StartAsync(TwoAccounts, DevicesInB);
        using var device = await broker.ConnectAsync(version, "meter-1", b => b.WithCredentials("dev", "pw"));
        var received = new Received(device);
        await device.SubscribeAsync("orders/#");

        await using var a = broker.Bus.CreateClient(new BusClientOptions { Account = "A" });
        await using var b = broker.Bus.CreateClient(new BusClientOptions { Account = "B" });
        Assert.True(b.HasInterest("orders.1"u8));
        Assert.False(a.HasInterest("orders.1"u8));

        await using var nats = new NatsConnection(new NatsOpts { Url = broker.Url });
        await nats.PublishAsync("orders.from-g", "$G");
        await nats.PingAsync();
        Publish(a, "orders.from-a", "A");
        Publish(b, "orders.from-b", "B");
        var first = await received.NextAsync();
        Assert.Equal(("orders/from-b", "B"), (first.Topic, Encoding.UTF8.GetString(first.Payload)));
        await received.NoneAsync();

        // Its publishes reach B's subscribers only: A's and $G's get their own account's message first.
        var inB = Channel.CreateUnbounded<string>();
        var inA = Channel.CreateUnbounded<string>();
        using var subB = b.Subscribe("up.>", null, (in BusMessage m) => inB.Writer.TryWrite(Encoding.UTF8.GetString(m.Subject)));
        using var subA = a.Subscribe("up.>", null, (in BusMessage m) => inA.Writer.TryWrite(Encoding.UTF8.GetString(m.Subject)));
        await using var natsSub = await nats.SubscribeCoreAsync<string>("up.>");
        await nats.PingAsync();
        await device.PublishAsync("up/reading", "21", MqttQualityOfServiceLevel.AtLeastOnce);
        Assert.Equal("up.reading", await ReadAsync(inB));
        Publish(a, "up.a", "A");
        await nats.PublishAsync("up.g", "G");
        Assert.Equal("up.a", await ReadAsync(inA));
        using var timeout = new CancellationTokenSource(Wait);
        Assert.Equal("up.g", (await natsSub.Msgs.ReadAsync(timeout.Token)).Subject);
    }

    /// <summary>Users of the broker: g in $G, a in A, b and b2 in B.</summary>
    private static void UsersInAccounts(BrokerOptions options)
    {
        TwoAccounts(options);
        options.Authorization.Users = [new UserOptions { User = "g", Password = "g" }];
        options.Accounts[0].Users = [new UserOptions { User = "a", Password = "a" }];
        options.Accounts[1].Users = [new UserOptions { User = "b", Password = "b" }, new UserOptions { User = "b2", Password = "b2" }];
    }

    [Theory(Timeout = 60_000)]
    [MemberData(nameof(Versions))]
    public async Task A_user_of_account_B_gets_Bs_nats_publishes_and_not_As(MqttProtocolVersion version)
    {
        await using var broker = await MqttBroker.StartAsync(UsersInAccounts);
        using var device = await broker.ConnectAsync(version, "meter-1", b => b.WithCredentials("b", "b"));
        var received = new Received(device);
        await device.SubscribeAsync("orders/#");

        await using var natsA = new NatsConnection(new NatsOpts { Url = broker.Url, AuthOpts = new NatsAuthOpts { Username = "a", Password = "a" } });
        await using var natsG = new NatsConnection(new NatsOpts { Url = broker.Url, AuthOpts = new NatsAuthOpts { Username = "g", Password = "g" } });
        await using var natsB = new NatsConnection(new NatsOpts { Url = broker.Url, AuthOpts = new NatsAuthOpts { Username = "b2", Password = "b2" } });
        await natsA.PublishAsync("orders.a", "from A");
        await natsG.PublishAsync("orders.g", "from $G");
        await natsA.PingAsync();
        await natsG.PingAsync();
        await natsB.PublishAsync("orders.b", "from B");
        var first = await received.NextAsync();
        Assert.Equal(("orders/b", "from B"), (first.Topic, Encoding.UTF8.GetString(first.Payload)));
        await received.NoneAsync();

        // Its publishes reach B's NATS users only.
        await using var upA = await natsA.SubscribeCoreAsync<string>("up.>");
        await using var upB = await natsB.SubscribeCoreAsync<string>("up.>");
        await natsA.PingAsync();
        await natsB.PingAsync();
        await device.PublishAsync("up/reading", "21");
        using var timeout = new CancellationTokenSource(Wait);
        Assert.Equal("up.reading", (await upB.Msgs.ReadAsync(timeout.Token)).Subject);
        await natsA.PublishAsync("up.own", "A's own");
        Assert.Equal("up.own", (await upA.Msgs.ReadAsync(timeout.Token)).Subject);

        // /connz names the client's user; the same client id in $G is another session: no takeover across accounts.
        using var sameIdInG = await broker.ConnectAsync(version, "meter-1", b => b.WithCredentials("g", "g"));
        await Task.Delay(300);
        Assert.True(device.IsConnected);
        Assert.True(sameIdInG.IsConnected);
        await natsB.PublishAsync("orders.after", "still here");
        Assert.Equal("orders/after", (await received.NextAsync()).Topic);
    }

    [Theory(Timeout = 60_000)]
    [MemberData(nameof(Versions))]
    public async Task The_accounts_max_connections_refuses_with_server_unavailable(MqttProtocolVersion version)
    {
        await using var broker = await MqttBroker.StartAsync(o =>
        {
            UsersInAccounts(o);
            o.Accounts[1].Limits.MaxConnections = 1;
        });
        using var first = await broker.ConnectAsync(version, "first", b => b.WithCredentials("b", "b"));

        // nats-server closes such a client without a CONNACK; here it is told "server unavailable", as for the server's limit.
        Assert.Equal(MqttClientConnectResultCode.ServerUnavailable, await broker.ConnectResultAsync(version, "b2", "b2"));
        Assert.True(broker.Logs.Contains("maximum account active connections exceeded for account B"));
        var closed = await MonitorHttp.GetJsonAsync(broker, "/connz?state=closed");
        Assert.Contains(closed.GetProperty("connections").EnumerateArray(), c => c.GetProperty("reason").GetString() == "Maximum Account Connections Exceeded");

        // Other accounts are not limited by B's.
        Assert.Equal(MqttClientConnectResultCode.Success, await broker.ConnectResultAsync(version, "a", "a"));
    }

    [Theory(Timeout = 60_000)]
    [MemberData(nameof(Versions))]
    public async Task Outside_G_a_persistent_session_or_a_will_needing_the_state_is_refused_with_server_unavailable(MqttProtocolVersion version)
    {
        await using var broker = await StartWithJetStreamAsync();

        var persistent = new MqttClientOptionsBuilder().WithCleanSession(false);
        if (version == MqttProtocolVersion.V500)
        {
            persistent.WithSessionExpiryInterval(60);
        }

        Assert.Equal(MqttClientConnectResultCode.ServerUnavailable, await ConnectResultAsync(broker, version, persistent));
        Assert.True(broker.Logs.Contains("account \"B\" cannot have a persistent session"));

        var retainedWill = new MqttClientOptionsBuilder().WithCleanSession().WithWillTopic("status/meter").WithWillPayload("gone").WithWillRetain();
        Assert.Equal(MqttClientConnectResultCode.ServerUnavailable, await ConnectResultAsync(broker, version, retainedWill));
        Assert.True(broker.Logs.Contains("account \"B\" cannot have a retained will"));

        var qosWill = new MqttClientOptionsBuilder().WithCleanSession().WithWillTopic("status/meter").WithWillPayload("gone").WithWillQualityOfServiceLevel(MqttQualityOfServiceLevel.AtLeastOnce);
        Assert.Equal(MqttClientConnectResultCode.ServerUnavailable, await ConnectResultAsync(broker, version, qosWill));

        // The refused ones left no connection behind; a clean session with a QoS 0 will is admitted.
        await Eventually.AssertAsync(async () => (await MonitorHttp.GetJsonAsync(broker, "/connz")).GetProperty("num_connections").GetInt32() == 0, "no connection open", Wait);
        var clean = new MqttClientOptionsBuilder().WithCleanSession().WithWillTopic("status/meter").WithWillPayload("gone");
        Assert.Equal(MqttClientConnectResultCode.Success, await ConnectResultAsync(broker, version, clean));
    }

    [Theory(Timeout = 60_000)]
    [MemberData(nameof(Versions))]
    public async Task Outside_G_qos_1_and_2_subscriptions_are_granted_qos_0_and_qos_publishes_are_delivered_without_being_stored(MqttProtocolVersion version)
    {
        await using var broker = await StartWithJetStreamAsync();
        using var subscriber = await broker.ConnectAsync(version, "sub", b => b.WithCredentials("dev", "pw"));
        var received = new Received(subscriber);
        var granted = await subscriber.SubscribeAsync(new MqttClientSubscribeOptionsBuilder()
            .WithTopicFilter(f => f.WithTopic("q1/#").WithQualityOfServiceLevel(MqttQualityOfServiceLevel.AtLeastOnce))
            .WithTopicFilter(f => f.WithTopic("q2/#").WithQualityOfServiceLevel(MqttQualityOfServiceLevel.ExactlyOnce))
            .Build());
        Assert.Equal([MqttClientSubscribeResultCode.GrantedQoS0, MqttClientSubscribeResultCode.GrantedQoS0], granted.Items.Select(i => i.ResultCode));

        using var publisher = await broker.ConnectAsync(version, "pub", b => b.WithCredentials("dev", "pw"));
        Assert.True((await publisher.PublishAsync(Message("q1/a", "at-one", MqttQualityOfServiceLevel.AtLeastOnce))).IsSuccess);
        Assert.True((await publisher.PublishAsync(Message("q2/a", "at-two", MqttQualityOfServiceLevel.ExactlyOnce))).IsSuccess);
        var one = await received.NextAsync();
        var two = await received.NextAsync();
        Assert.Equal(("at-one", MqttQualityOfServiceLevel.AtMostOnce), (Encoding.UTF8.GetString(one.Payload), one.QualityOfServiceLevel));
        Assert.Equal(("at-two", MqttQualityOfServiceLevel.AtMostOnce), (Encoding.UTF8.GetString(two.Payload), two.QualityOfServiceLevel));

        // Nothing of B was stored anywhere: with accounts configured and none enabling JetStream, no account has it, $G
        // neither (as nats-server), so there are no MQTT streams at all.
        await using var nats = new NatsConnection(new NatsOpts { Url = broker.Url });
        var info = await nats.RequestAsync<string, string>("$JS.API.STREAM.INFO.$MQTT_msgs", null);
        var error = System.Text.Json.JsonDocument.Parse(info.Data!).RootElement.GetProperty("error");
        Assert.Equal(10039, error.GetProperty("err_code").GetInt32());
    }

    [Theory(Timeout = 60_000)]
    [InlineData(4)]
    [InlineData(5)]
    public async Task Outside_G_a_retained_publish_closes_the_connection(byte level)
    {
        await using var broker = await StartWithJetStreamAsync();
        await using var raw = await RawMqtt.ConnectAsync(broker.MqttEndPoint());
        await raw.SendAsync(RawMqtt.Packet(0x10, RawMqtt.Str("MQTT"), [level, 0xC2], RawMqtt.U16(60), level == 5 ? [0] : [], RawMqtt.Str("retainer"), RawMqtt.Str("dev"), RawMqtt.Str("pw")));
        var (header, connAck) = await raw.ReadPacketAsync();
        Assert.Equal(0x20, header);
        Assert.Equal(0, connAck[1]);
        if (level == 5)
        {
            // CONNACK says Retain Available 0 (property 0x25).
            Assert.Contains(connAck.AsSpan(3).ToArray().Select((b, i) => (b, i)), p => p.b == 0x25 && connAck[3 + p.i + 1] == 0);
        }

        await raw.SendAsync(RawMqtt.Packet(0x31, RawMqtt.Str("status/meter"), level == 5 ? [0] : [], "up"u8.ToArray()));
        if (level == 5)
        {
            var (disconnect, body) = await raw.ReadPacketAsync();
            Assert.Equal(0xE0, disconnect);
            Assert.Equal(0x9A, body[0]);
        }

        Assert.True(await raw.ClosedAsync());
        Assert.True(broker.Logs.Contains("retained messages are not available to clients of account \"B\""));
    }

    private Task<TestBroker> StartWithJetStreamAsync()
        => MqttBroker.StartAsync(TwoAccounts, [new JetStreamPlugin(new JetStreamOptions { StoreDirectory = storeDirectory.Path }), new MemoryStorePlugin()], DevicesInB);

    private static async Task<MqttClientConnectResultCode> ConnectResultAsync(TestBroker broker, MqttProtocolVersion version, MqttClientOptionsBuilder builder)
    {
        using var client = new MqttClientFactory().CreateMqttClient();
        using var cts = new CancellationTokenSource(MqttBroker.Timeout);
        builder.WithTcpServer("127.0.0.1", broker.MqttPort()).WithProtocolVersion(version).WithClientId(Guid.NewGuid().ToString("N"))
            .WithCredentials("dev", "pw").WithTimeout(MqttBroker.Timeout);
        try
        {
            var result = await client.ConnectAsync(builder.Build(), cts.Token);
            await client.DisconnectAsync();
            return result.ResultCode;
        }
        catch (MQTTnet.Adapter.MqttConnectingFailedException ex)
        {
            // MQTTnet throws for a refusal; the reason is only in the message (as MqttBroker.ConnectResultAsync reads it).
            return Enum.GetValues<MqttClientConnectResultCode>().First(code => code != MqttClientConnectResultCode.Success && ex.Message.Contains(code.ToString(), StringComparison.Ordinal));
        }
    }

    private static MqttApplicationMessage Message(string topic, string payload, MqttQualityOfServiceLevel qos)
        => new MqttApplicationMessageBuilder().WithTopic(topic).WithPayload(payload).WithQualityOfServiceLevel(qos).Build();

    private static void Publish(IBusClient client, string subject, string payload)
        => client.Publish(Encoding.UTF8.GetBytes(subject), default, default, new ReadOnlySequence<byte>(Encoding.UTF8.GetBytes(payload)));

    private static async Task<string> ReadAsync(Channel<string> channel)
    {
        using var timeout = new CancellationTokenSource(Wait);
        return await channel.Reader.ReadAsync(timeout.Token);
    }
}
