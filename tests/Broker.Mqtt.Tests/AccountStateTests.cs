using System.Net;
using System.Text;
using System.Text.Json;
using Broker.TestKit;
using MQTTnet;
using MQTTnet.Formatter;
using MQTTnet.Protocol;
using NATS.Client.Core;
using static Broker.Mqtt.Tests.RawMqtt;

namespace Broker.Mqtt.Tests;

/// <summary>
/// Each account's MQTT state in that account's own JetStream, as nats-server keeps it (an account session manager and
/// <c>$MQTT_</c> streams per account, made with the account's first MQTT client): the same client id in two accounts is
/// two sessions that survive a reconnect and a restart each in its account's streams, QoS 1 messages and retained
/// messages stay in their account, an account without JetStream refuses every MQTT client, and a mapped publish is
/// kept under the mapped subject. Side by side with nats-server 2.9.10 (MQTT 3.1.1).
/// </summary>
public sealed class AccountStateTests
{
    private const MqttQualityOfServiceLevel AtLeastOnce = MqttQualityOfServiceLevel.AtLeastOnce;

    public static TheoryData<ServerKind> Servers => [ServerKind.Ours, ServerKind.Reference];

    /// <summary>nats-server 2.9.10 serves MQTT 3.1.1 only: MQTT 5 runs against ours alone.</summary>
    public static TheoryData<ServerKind, MqttProtocolVersion> ServersAndVersions => new()
    {
        { ServerKind.Ours, MqttProtocolVersion.V311 },
        { ServerKind.Reference, MqttProtocolVersion.V311 },
        { ServerKind.Ours, MqttProtocolVersion.V500 },
    };

    [Theory(Timeout = 120_000)]
    [MemberData(nameof(ServersAndVersions))]
    public async Task The_same_client_id_in_two_accounts_is_two_sessions_that_survive_a_reconnect_and_a_restart(ServerKind kind, MqttProtocolVersion version)
    {
        await using var server = await AccountMqttServer.StartAsync(kind);
        foreach (var (user, filter) in new[] { ("a", "only-a/#"), ("b", "only-b/#") })
        {
            using var device = await server.MqttAsync(user, "device", cleanSession: false, version);
            Assert.False(device.SessionPresent);
            await device.Client.SubscribeAsync(filter, AtLeastOnce);
            await device.Client.DisconnectAsync();
        }

        // While both are away, each account publishes to both filters: each session gets its own account's message.
        await PublishToBothAsync(server, "before restart", version);
        await ResumeAsync(server, "a", ("only-a/x", "from a before restart"), version);
        await ResumeAsync(server, "b", ("only-b/x", "from b before restart"), version);

        await server.RestartAsync();
        await PublishToBothAsync(server, "after restart", version);
        await ResumeAsync(server, "a", ("only-a/x", "from a after restart"), version);
        await ResumeAsync(server, "b", ("only-b/x", "from b after restart"), version);
    }

    [Theory(Timeout = 120_000)]
    [MemberData(nameof(Servers))]
    public async Task Mosquitto_sessions_of_one_client_id_in_two_accounts_get_their_own_accounts_qos_1_messages_after_a_restart(ServerKind kind)
    {
        await using var server = await AccountMqttServer.StartAsync(kind);
        string[] Args(string user, params string[] more) => ["-h", "127.0.0.1", "-p", server.MqttPort.ToString(System.Globalization.CultureInfo.InvariantCulture), "-V", "mqttv311", "-u", user, "-P", user, .. more];
        foreach (var user in new[] { "a", "b" })
        {
            var subscribed = await ExternalProcess.RunAsync("mosquitto_sub", Args(user, "-c", "-i", "meter", "-q", "1", "-t", "report/#", "-E"), MqttBroker.Timeout);
            Assert.Equal(0, subscribed.ExitCode);
        }

        foreach (var user in new[] { "a", "b" })
        {
            var published = await ExternalProcess.RunAsync("mosquitto_pub", Args(user, "-i", "pub-" + user, "-q", "1", "-t", "report/x", "-m", "from-" + user), MqttBroker.Timeout);
            Assert.Equal(0, published.ExitCode);
        }

        await server.RestartAsync();
        foreach (var user in new[] { "a", "b" })
        {
            var resumed = await ExternalProcess.RunAsync("mosquitto_sub", Args(user, "-c", "-i", "meter", "-q", "1", "-t", "report/#", "-C", "1", "-W", "10", "-v"), TimeSpan.FromSeconds(15));
            Assert.Equal(0, resumed.ExitCode);
            Assert.Equal("report/x from-" + user, Assert.Single(resumed.OutputLines));
        }
    }

    [Theory(Timeout = 60_000)]
    [MemberData(nameof(ServersAndVersions))]
    public async Task Retained_messages_stay_in_their_account(ServerKind kind, MqttProtocolVersion version)
    {
        await using var server = await AccountMqttServer.StartAsync(kind);
        foreach (var user in new[] { "a", "b" })
        {
            using var publisher = await server.MqttAsync(user, "retainer", version: version);
            await publisher.Client.PublishAsync("status/meter", "set in " + user, AtLeastOnce, retain: true);
            await publisher.Client.DisconnectAsync();
        }

        foreach (var user in new[] { "a", "b" })
        {
            var retained = await UntilAsync(async () =>
            {
                using var newcomer = await server.MqttAsync(user, "newcomer", version: version);
                await newcomer.Client.SubscribeAsync("status/#");
                try
                {
                    var message = await newcomer.Received.NextAsync(TimeSpan.FromSeconds(1));
                    await newcomer.Received.NoneAsync();
                    return (message.Topic, Encoding.UTF8.GetString(message.Payload), message.Retain);
                }
                catch (OperationCanceledException)
                {
                    return default;
                }
            }, value => value.Topic is not null, $"the retained message of {user}", MqttBroker.Timeout);
            Assert.Equal(("status/meter", "set in " + user, true), retained);
        }
    }

    [Theory(Timeout = 60_000)]
    [MemberData(nameof(Servers))]
    public async Task An_account_without_JetStream_refuses_every_mqtt_client_without_a_connack(ServerKind kind)
    {
        // B has no JetStream, nor has $G once accounts are configured, nor the system account: even a clean session at
        // QoS 0 is closed without a CONNACK (nats-server: "unable to connect: lookup sessions stream for account ...").
        await using var server = await AccountMqttServer.StartAsync(kind, bHasJetStream: false);
        foreach (var user in new[] { "b", "g", "s" })
        {
            await using var raw = await RawMqtt.ConnectAsync(new IPEndPoint(IPAddress.Loopback, server.MqttPort));
            await raw.SendAsync(Packet(0x10, Str("MQTT"), [4, 0xC2], U16(60), Str("clean-" + user), Str(user), Str(user)));
            Assert.True(await raw.ClosedAsync(), user + ": closed");
            Assert.Empty(raw.Unread);
        }

        using var inA = await server.MqttAsync("a", "served");
        Assert.True(inA.Client.IsConnected);
        if (server.Ours is { } ours)
        {
            Assert.True(ours.Logs.Contains("unable to connect: lookup sessions stream for account \"B\": JetStream not enabled for account (10039)"));
            Assert.True(ours.Logs.Contains("unable to connect: lookup sessions stream for account \"$G\": JetStream not enabled for account (10039)"));
            Assert.True(ours.Logs.Contains("unable to connect: lookup sessions stream for account \"SYS\": JetStream not enabled for account (10039)"));
            var closed = await MonitorHttp.GetJsonAsync(ours, "/connz?state=closed");
            Assert.Equal(3, closed.GetProperty("connections").EnumerateArray().Count(c => c.GetProperty("reason").GetString() == "Protocol Violation"));

            // MQTT 5, which nats-server 2.9.10 does not serve, is told "server unavailable" with the reason.
            await using var raw = await RawMqtt.ConnectAsync(new IPEndPoint(IPAddress.Loopback, server.MqttPort));
            await raw.SendAsync(Packet(0x10, Str("MQTT"), [5, 0xC2], U16(60), [0], Str("v5"), Str("b"), Str("b")));
            var (header, body) = await raw.ReadPacketAsync();
            Assert.Equal((0x20, 0x88), (header, body[1]));
            Assert.True(await raw.ClosedAsync());
        }
    }

    [Theory(Timeout = 60_000)]
    [MemberData(nameof(Servers))]
    public async Task An_accounts_stream_names_list_its_own_mqtt_streams_made_with_its_first_client(ServerKind kind)
    {
        await using var server = await AccountMqttServer.StartAsync(kind);
        await using var natsA = await server.NatsAsync("a");
        await using var natsB = await server.NatsAsync("b");
        using (var inB = await server.MqttAsync("b", "first-in-b"))
        {
            await inB.Client.DisconnectAsync();
        }

        Assert.Empty(await MqttStreamNamesAsync(natsA));
        string[] nats29 = ["$MQTT_msgs", "$MQTT_rmsgs", "$MQTT_sess"];
        Assert.Equal(nats29, (await MqttStreamNamesAsync(natsB)).Intersect(nats29).Order(StringComparer.Ordinal));

        using (var inA = await server.MqttAsync("a", "first-in-a"))
        {
            await inA.Client.DisconnectAsync();
        }

        Assert.Equal(nats29, (await MqttStreamNamesAsync(natsA)).Intersect(nats29).Order(StringComparer.Ordinal));
    }

    [Theory(Timeout = 60_000)]
    [MemberData(nameof(Servers))]
    public async Task A_qos_1_publish_in_an_account_with_mappings_is_stored_and_retained_under_the_mapped_topic(ServerKind kind)
    {
        await using var server = await AccountMqttServer.StartAsync(kind, mappingsOfA: "\"up.*\": \"mapped.$1\"");
        using var subscriber = await server.MqttAsync("a", "subscriber");
        await subscriber.Client.SubscribeAsync("mapped/#", AtLeastOnce);
        await subscriber.Client.SubscribeAsync("up/#", AtLeastOnce);
        using var publisher = await server.MqttAsync("a", "publisher");
        await publisher.Client.PublishAsync("up/reading", "21", AtLeastOnce);

        // Only the stored copy reaches a QoS 1 subscription at QoS 1: it was stored under the mapped subject.
        var message = await subscriber.Received.NextAsync();
        Assert.Equal(("mapped/reading", "21", AtLeastOnce), (message.Topic, Encoding.UTF8.GetString(message.Payload), message.QualityOfServiceLevel));
        await subscriber.Received.NoneAsync();

        await publisher.Client.PublishAsync("up/status", "on", AtLeastOnce, retain: true);
        Assert.Equal("mapped/status", (await subscriber.Received.NextAsync()).Topic);
        var retained = await UntilAsync(async () =>
        {
            using var newcomer = await server.MqttAsync("a", "newcomer");
            await newcomer.Client.SubscribeAsync("mapped/#");
            await newcomer.Client.SubscribeAsync("up/#");
            try
            {
                var first = await newcomer.Received.NextAsync(TimeSpan.FromSeconds(1));
                await newcomer.Received.NoneAsync();
                return (first.Topic, first.Retain);
            }
            catch (OperationCanceledException)
            {
                return default;
            }
        }, value => value.Topic is not null, "the retained message", MqttBroker.Timeout);
        Assert.Equal(("mapped/status", true), retained);
    }

    /// <summary>
    /// Ours only: nats-server 2.9.10 maps a will with the mappings of the account the client is in when its CONNECT is
    /// read, which is <c>$G</c> for a user of an account (it binds the account after reading), so there the will of a
    /// user of A goes to <c>up/will</c> unmapped (checked); here the client's account maps it, as it maps its publishes.
    /// </summary>
    [Fact(Timeout = 60_000)]
    public async Task A_will_in_an_account_with_mappings_is_published_stored_and_retained_under_the_mapped_topic()
    {
        await using var server = await AccountMqttServer.StartAsync(ServerKind.Ours, mappingsOfA: "\"up.*\": \"mapped.$1\"");
        using var watcher = await server.MqttAsync("a", "watcher");
        await watcher.Client.SubscribeAsync("mapped/#", AtLeastOnce);
        await using (var raw = await RawMqtt.ConnectAsync(new IPEndPoint(IPAddress.Loopback, server.MqttPort)))
        {
            // CONNECT 3.1.1: user, password, will retained at QoS 1 on up/will, clean session; then the socket just closes.
            await raw.SendAsync(Packet(0x10, Str("MQTT"), [4, 0xEE], U16(60), Str("crasher"), Str("up/will"), Str("gone"), Str("a"), Str("a")));
            Assert.Equal(0x20, (await raw.ReadPacketAsync()).Header);
        }

        var will = await watcher.Received.NextAsync();
        Assert.Equal(("mapped/will", "gone", AtLeastOnce), (will.Topic, Encoding.UTF8.GetString(will.Payload), will.QualityOfServiceLevel));
        var retained = await UntilAsync(async () =>
        {
            using var newcomer = await server.MqttAsync("a", "newcomer");
            await newcomer.Client.SubscribeAsync("mapped/#");
            await newcomer.Client.SubscribeAsync("up/#");
            try
            {
                var first = await newcomer.Received.NextAsync(TimeSpan.FromSeconds(1));
                await newcomer.Received.NoneAsync();
                return (first.Topic, first.Retain);
            }
            catch (OperationCanceledException)
            {
                return default;
            }
        }, value => value.Topic is not null, "the retained will", MqttBroker.Timeout);
        Assert.Equal(("mapped/will", true), retained);
    }

    /// <summary>Runs <paramref name="attempt"/> until its value is <paramref name="done"/> (the stores write asynchronously).</summary>
    private static async Task<T> UntilAsync<T>(Func<Task<T>> attempt, Func<T, bool> done, string what, TimeSpan timeout)
    {
        var deadline = DateTime.UtcNow + timeout;
        while (true)
        {
            var value = await attempt();
            if (done(value))
            {
                return value;
            }

            Assert.True(DateTime.UtcNow < deadline, "no " + what + " within " + timeout);
            await Task.Delay(100);
        }
    }

    private static async Task PublishToBothAsync(AccountMqttServer server, string when, MqttProtocolVersion version)
    {
        foreach (var user in new[] { "a", "b" })
        {
            using var publisher = await server.MqttAsync(user, "publisher", version: version);
            await publisher.Client.PublishAsync("only-a/x", $"from {user} {when}", AtLeastOnce);
            await publisher.Client.PublishAsync("only-b/x", $"from {user} {when}", AtLeastOnce);
            await publisher.Client.DisconnectAsync();
        }
    }

    private static async Task ResumeAsync(AccountMqttServer server, string user, (string Topic, string Payload) expected, MqttProtocolVersion version)
    {
        using var device = await server.MqttAsync(user, "device", cleanSession: false, version);
        Assert.True(device.SessionPresent, user + ": session present");
        var message = await device.Received.NextAsync();
        Assert.Equal(expected, (message.Topic, Encoding.UTF8.GetString(message.Payload)));
        await device.Received.NoneAsync(TimeSpan.FromMilliseconds(500));
        await device.Client.DisconnectAsync();
    }

    private static async Task<string[]> MqttStreamNamesAsync(NatsConnection connection)
    {
        var reply = await connection.RequestAsync<string, string>("$JS.API.STREAM.NAMES", "{}");
        var streams = JsonDocument.Parse(reply.Data!).RootElement.GetProperty("streams");
        return streams.ValueKind == JsonValueKind.Null ? [] : [.. streams.EnumerateArray().Select(s => s.GetString()!).Where(s => s.StartsWith("$MQTT_", StringComparison.Ordinal))];
    }
}
