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
/// MQTT clients in broker accounts: publishes and subscriptions stay in the client's account, the account's limits
/// apply. The state of each account (sessions, retained messages, QoS 1 and 2) is in <see cref="AccountStateTests"/>.
/// </summary>
public sealed class AccountTests
{
    public static TheoryData<MqttProtocolVersion> Versions => [MqttProtocolVersion.V311, MqttProtocolVersion.V500];

    private static readonly TimeSpan Wait = TimeSpan.FromSeconds(10);

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

    private static void Publish(IBusClient client, string subject, string payload)
        => client.Publish(Encoding.UTF8.GetBytes(subject), default, default, new ReadOnlySequence<byte>(Encoding.UTF8.GetBytes(payload)));

    private static async Task<string> ReadAsync(Channel<string> channel)
    {
        using var timeout = new CancellationTokenSource(Wait);
        return await channel.Reader.ReadAsync(timeout.Token);
    }
}
