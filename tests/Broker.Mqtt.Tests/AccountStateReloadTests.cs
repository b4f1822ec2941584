using System.Net;
using System.Text;
using Broker.Core;
using Broker.Core.Auth;
using Broker.TestKit;
using MQTTnet;
using MQTTnet.Formatter;
using MQTTnet.Protocol;
using static Broker.Mqtt.Tests.RawMqtt;

namespace Broker.Mqtt.Tests;

/// <summary>
/// The per-account MQTT state where nats-server has nothing to compare: a reload that takes an account's JetStream
/// away closes its MQTT clients and refuses new ones until it is given back (then the sessions resume from the
/// account's streams), and a broker without JetStream keeps each account's state apart in memory. MQTT 5 included.
/// </summary>
public sealed class AccountStateReloadTests
{
    public static TheoryData<MqttProtocolVersion> Versions => [MqttProtocolVersion.V311, MqttProtocolVersion.V500];

    [Theory(Timeout = 90_000)]
    [MemberData(nameof(Versions))]
    public async Task A_reload_that_takes_an_accounts_JetStream_closes_its_mqtt_clients_and_refuses_new_ones(MqttProtocolVersion version)
    {
        await using var server = await AccountMqttServer.StartAsync(ServerKind.Ours);
        var ours = server.Ours!;
        var inA = await server.MqttAsync("a", "device", cleanSession: false, version);
        await inA.Client.SubscribeAsync("cmd/#", MqttQualityOfServiceLevel.AtLeastOnce);
        using var inB = await server.MqttAsync("b", "device", cleanSession: false, version);
        await inB.Client.SubscribeAsync("cmd/#", MqttQualityOfServiceLevel.AtLeastOnce);

        await server.ReloadAsync(aHasJetStream: false);
        await Eventually.AssertAsync(() => Task.FromResult(!inA.Client.IsConnected), "A's client closed", MqttBroker.Timeout);
        Assert.True(ours.Logs.Contains("MQTT state of account A retired after a configuration reload (account \"A\" has no JetStream any more)"));
        inA.Dispose();
        await Eventually.AssertAsync(async () => await RefusedAsync(server, "a"), "A's CONNECT refused", MqttBroker.Timeout);

        // B's client stays and keeps its QoS 1 delivery.
        Assert.True(inB.Client.IsConnected);
        using (var publisher = await server.MqttAsync("b", "publisher", version: version))
        {
            await publisher.Client.PublishAsync("cmd/go", "b keeps going", MqttQualityOfServiceLevel.AtLeastOnce);
        }

        var received = await inB.Received.NextAsync();
        Assert.Equal(("cmd/go", MqttQualityOfServiceLevel.AtLeastOnce), (received.Topic, received.QualityOfServiceLevel));

        // Given back: A's session resumes from its streams.
        await server.ReloadAsync(aHasJetStream: true);
        var resumed = await EventuallyConnectAsync(server, "a", version);
        Assert.True(resumed.SessionPresent, "no session after the reload; the broker's log:\n" + string.Join("\n", ours.Logs.Entries));
        using (var publisher = await server.MqttAsync("a", "publisher", version: version))
        {
            await publisher.Client.PublishAsync("cmd/again", "a is back", MqttQualityOfServiceLevel.AtLeastOnce);
        }

        Assert.Equal("a is back", Encoding.UTF8.GetString((await resumed.Received.NextAsync()).Payload));
        resumed.Dispose();
    }

    [Fact(Timeout = 60_000)]
    public async Task A_reload_that_adds_accounts_takes_JetStream_from_G_and_so_its_mqtt_clients()
    {
        using var store = new TempDirectory("mqtt-acc-g-");
        await using var broker = await MqttBroker.StartAsync(null, [new Broker.JetStream.JetStreamPlugin(new Broker.JetStream.JetStreamOptions { StoreDirectory = store.Path }), new Broker.Storage.FileStore.FileStorePlugin()]);
        using var inG = await broker.ConnectAsync(MqttProtocolVersion.V311, "device", b => b.WithCleanSession(false));
        Assert.True(broker.Logs.Contains("MQTT state of account $G on its JetStream"));

        // With an account configured, $G has no JetStream (nats-server's globalAccountOnly): its MQTT state is retired.
        var reloaded = new BrokerOptions { Host = "127.0.0.1", Port = broker.Port, Accounts = [new AccountOptions { Name = "A" }] };
        Assert.True((await broker.Server.ReloadAsync(reloaded)).Succeeded);
        await Eventually.AssertAsync(() => Task.FromResult(!inG.IsConnected), "$G's client closed", MqttBroker.Timeout);
        Assert.True(broker.Logs.Contains("MQTT state of account $G retired after a configuration reload (account \"$G\" has no JetStream any more)"));
        await using var raw = await RawMqtt.ConnectAsync(broker.MqttEndPoint());
        await raw.SendAsync(Connect("refused"));
        Assert.True(await raw.ClosedAsync());
        Assert.Empty(raw.Unread);
    }

    [Theory(Timeout = 60_000)]
    [MemberData(nameof(Versions))]
    public async Task Without_JetStream_each_account_keeps_its_sessions_and_retained_messages_in_memory(MqttProtocolVersion version)
    {
        await using var broker = await MqttBroker.StartAsync(o =>
        {
            o.Accounts =
            [
                new AccountOptions { Name = "A", Users = [new UserOptions { User = "a", Password = "a" }] },
                new AccountOptions { Name = "B", Users = [new UserOptions { User = "b", Password = "b" }] },
            ];
        });
        foreach (var user in new[] { "a", "b" })
        {
            using var device = await broker.ConnectAsync(version, "device", b => Persistent(b.WithCredentials(user, user), version));
            await device.SubscribeAsync("only-" + user + "/#");
            await device.DisconnectAsync();
            using var publisher = await broker.ConnectAsync(version, "publisher", b => b.WithCredentials(user, user));
            await publisher.PublishAsync("status", "retained in " + user, retain: true);
        }

        foreach (var user in new[] { "a", "b" })
        {
            var client = new MqttClientFactory().CreateMqttClient();
            var received = new Received(client);
            using var cts = new CancellationTokenSource(MqttBroker.Timeout);
            var builder = new MqttClientOptionsBuilder().WithTcpServer("127.0.0.1", broker.MqttPort()).WithProtocolVersion(version)
                .WithClientId("device").WithCredentials(user, user).WithTimeout(MqttBroker.Timeout);
            var result = await client.ConnectAsync(Persistent(builder, version).Build(), cts.Token);
            Assert.True(result.IsSessionPresent, user);
            await client.SubscribeAsync("status");
            var retained = await received.NextAsync();
            Assert.Equal("retained in " + user, Encoding.UTF8.GetString(retained.Payload));
            await received.NoneAsync();
            client.Dispose();
        }

        Assert.True(broker.Logs.Contains("MQTT state in memory for account A"));
        Assert.True(broker.Logs.Contains("MQTT state in memory for account B"));
    }

    private static MqttClientOptionsBuilder Persistent(MqttClientOptionsBuilder builder, MqttProtocolVersion version)
    {
        builder.WithCleanSession(false);
        return version == MqttProtocolVersion.V500 ? builder.WithSessionExpiryInterval(600) : builder;
    }

    private static async Task<bool> RefusedAsync(AccountMqttServer server, string user)
    {
        await using var raw = await RawMqtt.ConnectAsync(new IPEndPoint(IPAddress.Loopback, server.MqttPort));
        await raw.SendAsync(Packet(0x10, Str("MQTT"), [4, 0xC2], U16(60), Str("probe"), Str(user), Str(user)));
        return await raw.ClosedAsync() && raw.Unread.Length == 0;
    }

    private static async Task<Device> EventuallyConnectAsync(AccountMqttServer server, string user, MqttProtocolVersion version)
    {
        var deadline = DateTime.UtcNow + MqttBroker.Timeout;
        while (true)
        {
            // Refused until the engine has started the account's JetStream again: MQTTnet throws for 3.1.1 and returns
            // the refusing CONNACK's result (not connected) for 5.
            try
            {
                var device = await server.MqttAsync(user, "device", cleanSession: false, version);
                if (device.Client.IsConnected || DateTime.UtcNow >= deadline)
                {
                    return device;
                }

                device.Dispose();
            }
            catch (MQTTnet.Exceptions.MqttCommunicationException) when (DateTime.UtcNow < deadline)
            {
            }

            await Task.Delay(200);
        }
    }
}
