using System.Text;
using Broker.Abstractions;
using Broker.JetStream;
using Broker.Storage.FileStore;
using Broker.Storage.MemStore;
using Broker.TestKit;
using MQTTnet;
using MQTTnet.Formatter;
using NATS.Client.Core;
using NATS.Client.JetStream;
using NATS.Client.JetStream.Models;

namespace Broker.Mqtt.Tests;

/// <summary>
/// Sessions and retained messages on JetStream (<c>$MQTT_sess</c>, <c>$MQTT_rmsgs</c>): across a restart of the broker
/// on the same store directory with the file store, across a reconnect with the memory store only, and visible to a
/// NATS JetStream client. The plugins are in the host's order (MQTT before JetStream), so the adapter starts before the
/// engine answers its API.
/// </summary>
public sealed partial class StateOnJetStreamTests : IDisposable
{
    private readonly TempDirectory storeDirectory = new("mqtt-state-");

    public void Dispose()
    {
        storeDirectory.Dispose();
    }

    [Theory(Timeout = 60_000)]
    [InlineData(MqttProtocolVersion.V311)]
    [InlineData(MqttProtocolVersion.V500)]
    public async Task Session_and_retained_messages_survive_a_restart_on_the_file_store(MqttProtocolVersion version)
    {
        await using (var broker = await StartAsync(fileStore: true))
        {
            using (var durable = await ConnectDurableAsync(broker, version))
            {
                Assert.False(durable.IsSessionPresent);
                await durable.Client.SubscribeAsync("kept/#");
                await durable.Client.DisconnectAsync();
            }

            using var publisher = await broker.ConnectAsync(version);
            await publisher.PublishAsync("state/a", "first", retain: true);
            await publisher.PublishAsync("state/b", "to be cleared", retain: true);
            await publisher.PublishAsync("state/a", "replaced", retain: true);
            await publisher.PublishAsync("state/b", "", retain: true);
            await publisher.PublishAsync("state/c", "kept", retain: true);
            await WaitForRetainedAsync(broker, ("state.a", "replaced"), ("state.c", "kept"));
        }

        await using (var broker = await StartAsync(fileStore: true))
        {
            await using var nats = new NatsConnection(new NatsOpts { Url = broker.Url });
            var js = new NatsJSContext(nats);
            foreach (var name in new[] { "$MQTT_sess", "$MQTT_rmsgs", "$MQTT_msgs" })
            {
                Assert.Equal(StreamConfigStorage.File, (await js.GetStreamAsync(name)).Info.Config.Storage);
            }

            using var durable = await ConnectDurableAsync(broker, version);
            Assert.True(durable.IsSessionPresent);
            var received = new Received(durable.Client);
            await nats.PublishAsync("kept.topic", Encoding.UTF8.GetBytes("after restart"));
            Assert.Equal(("kept/topic", "after restart"), Text(await received.NextAsync()));

            using var newcomer = await broker.ConnectAsync(version);
            var retained = new Received(newcomer);
            await newcomer.SubscribeAsync("state/#");
            var first = await retained.NextAsync();
            var second = await retained.NextAsync();
            Assert.True(first.Retain && second.Retain);
            Assert.Equal([("state/a", "replaced"), ("state/c", "kept")], new[] { Text(first), Text(second) }.Order());
            await retained.NoneAsync();
        }
    }

    [Fact(Timeout = 60_000)]
    public async Task An_mqtt5_session_that_expired_while_the_broker_was_down_is_not_resumed()
    {
        await using (var broker = await StartAsync(fileStore: true))
        {
            foreach (var (clientId, expiry) in new[] { ("short-lived", 1u), ("long-lived", 3600u) })
            {
                using var durable = await ConnectDurableAsync(broker, MqttProtocolVersion.V500, expiry, clientId);
                await durable.Client.SubscribeAsync("kept/#", MQTTnet.Protocol.MqttQualityOfServiceLevel.AtLeastOnce);
                await durable.Client.DisconnectAsync();
            }
        }

        await Task.Delay(TimeSpan.FromSeconds(1.5));
        await using (var broker = await StartAsync(fileStore: true))
        {
            // Purged at start, before any client of it comes back.
            using var longLived = await ConnectDurableAsync(broker, MqttProtocolVersion.V500, 60, "long-lived");
            Assert.True(longLived.IsSessionPresent);
            await using var nats = new NatsConnection(new NatsOpts { Url = broker.Url });
            var sessions = await new NatsJSContext(nats).GetStreamAsync("$MQTT_sess");
            Assert.Equal(1L, sessions.Info.State.Messages);
            Assert.True(broker.Logs.Contains("1 session(s) of account $G expired while the broker was down"));

            // The purged session's QoS 1 subscription released its consumer; the live one keeps its own.
            Assert.Equal(1, (await new NatsJSContext(nats).GetStreamAsync("$MQTT_msgs")).Info.State.ConsumerCount);

            using var shortLived = await ConnectDurableAsync(broker, MqttProtocolVersion.V500, 60, "short-lived");
            Assert.False(shortLived.IsSessionPresent);
        }
    }

    [Fact(Timeout = 60_000)]
    public async Task The_mqtt_streams_are_made_by_the_first_mqtt_client_not_at_start()
    {
        // As nats-server, which creates its MQTT streams with the first MQTT client's session manager: a broker that
        // runs JetStream and has the MQTT plugin but no MQTT client lists no stream of its own making.
        await using var broker = await StartAsync(fileStore: false);
        await using var nats = new NatsConnection(new NatsOpts { Url = broker.Url });
        var js = new NatsJSContext(nats);
        await Task.Delay(500);
        Assert.Empty(await js.ListStreamNamesAsync().ToListAsync());

        using (var client = await broker.ConnectAsync(MqttProtocolVersion.V311, "first"))
        {
            await client.DisconnectAsync();
        }

        Assert.Contains("$MQTT_sess", await js.ListStreamNamesAsync().ToListAsync());
    }

    [Fact(Timeout = 60_000)]
    public async Task With_the_memory_store_only_state_is_on_jetstream_in_memory_and_survives_a_reconnect()
    {
        await using var broker = await StartAsync(fileStore: false);
        await using var nats = new NatsConnection(new NatsOpts { Url = broker.Url });
        var js = new NatsJSContext(nats);
        using (var durable = await ConnectDurableAsync(broker, MqttProtocolVersion.V311))
        {
            await durable.Client.SubscribeAsync("kept/#");
            await durable.Client.PublishAsync("state/x", "retained", retain: true);
            await durable.Client.DisconnectAsync();
        }

        await WaitForRetainedAsync(broker, ("state.x", "retained"));
        var sessions = await js.GetStreamAsync("$MQTT_sess");
        Assert.Equal(StreamConfigStorage.Memory, sessions.Info.Config.Storage);
        Assert.Equal(["$MQTT.sess.>"], sessions.Info.Config.Subjects);
        Assert.Equal(1, sessions.Info.Config.MaxMsgsPerSubject);
        Assert.Equal(1L, sessions.Info.State.Messages);
        var messages = await js.GetStreamAsync("$MQTT_msgs");
        Assert.Equal(StreamConfigRetention.Interest, messages.Info.Config.Retention);

        using var again = await ConnectDurableAsync(broker, MqttProtocolVersion.V311);
        Assert.True(again.IsSessionPresent);
        var received = new Received(again.Client);
        await nats.PublishAsync("kept.x", Encoding.UTF8.GetBytes("still subscribed"));
        Assert.Equal(("kept/x", "still subscribed"), Text(await received.NextAsync()));

        // A clean session deletes the stored one.
        using (var clean = await broker.ConnectAsync(MqttProtocolVersion.V311, "durable-client"))
        {
            await Eventually.AssertAsync(async () => (await js.GetStreamAsync("$MQTT_sess")).Info.State.Messages == 0, "the stored session to be purged");
            await clean.DisconnectAsync();
        }

        // ... and the connection it took over does not store it again when it closes.
        Assert.True(await Eventually.TrueAsync(() => !again.Client.IsConnected));
        await Task.Delay(200);
        Assert.Equal(0L, (await js.GetStreamAsync("$MQTT_sess")).Info.State.Messages);
    }

    [Fact(Timeout = 60_000)]
    public async Task A_stream_refused_by_jetstream_leaves_the_state_in_memory_with_an_error_logged()
    {
        await using (var broker = await StartAsync(fileStore: true))
        {
            using (await broker.ConnectAsync(MqttProtocolVersion.V311))
            {
                // Connected: the adapter's streams exist. An operator replaces $MQTT_sess by a stream of their own.
            }

            await using var nats = new NatsConnection(new NatsOpts { Url = broker.Url });
            var js = new NatsJSContext(nats);
            await js.DeleteStreamAsync("$MQTT_sess");
            await js.CreateStreamAsync(new StreamConfig("OPS", ["$MQTT.sess.>"]) { Storage = StreamConfigStorage.File });
        }

        await using (var broker = await StartAsync(fileStore: true))
        {
            broker.ExpectErrors();
            using (var durable = await ConnectDurableAsync(broker, MqttProtocolVersion.V311))
            {
                await durable.Client.SubscribeAsync("kept/#");
                await durable.Client.DisconnectAsync();
            }

            Assert.Contains(broker.Logs.Errors, e => e.Message.Contains("cannot be kept on its JetStream", StringComparison.Ordinal)
                && e.Exception is not null && e.Exception.Message.Contains("10065", StringComparison.Ordinal));

            // Memory sessions still serve a reconnect; nothing reached the operator's stream.
            using var again = await ConnectDurableAsync(broker, MqttProtocolVersion.V311);
            Assert.True(again.IsSessionPresent);
            await using var nats = new NatsConnection(new NatsOpts { Url = broker.Url });
            Assert.Equal(0L, (await new NatsJSContext(nats).GetStreamAsync("OPS")).Info.State.Messages);
        }
    }

    private Task<TestBroker> StartAsync(bool fileStore)
    {
        IBrokerPlugin store = fileStore ? new FileStorePlugin(new FileStoreOptions()) : new MemoryStorePlugin();
        return MqttBroker.StartAsync(null, [new JetStreamPlugin(new JetStreamOptions { StoreDirectory = storeDirectory.Path }), store]);
    }

    /// <summary>Connects without a clean session (MQTT 5: with a session expiry interval).</summary>
    private static async Task<Durable> ConnectDurableAsync(TestBroker broker, MqttProtocolVersion version, uint expiry = 3600, string clientId = "durable-client")
    {
        var client = new MqttClientFactory().CreateMqttClient();
        var builder = new MqttClientOptionsBuilder().WithTcpServer("127.0.0.1", broker.MqttPort()).WithProtocolVersion(version)
            .WithClientId(clientId).WithCleanSession(false).WithTimeout(MqttBroker.Timeout);
        if (version == MqttProtocolVersion.V500)
        {
            builder.WithSessionExpiryInterval(expiry);
        }

        using var cts = new CancellationTokenSource(MqttBroker.Timeout);
        var result = await client.ConnectAsync(builder.Build(), cts.Token);
        return new Durable(client, result.IsSessionPresent);
    }

    private sealed record Durable(IMqttClient Client, bool IsSessionPresent) : IDisposable
    {
        public void Dispose() => Client.Dispose();
    }

    /// <summary>Waits until <c>$MQTT_rmsgs</c> holds exactly these messages (the adapter writes retained messages in the background).</summary>
    private static async Task WaitForRetainedAsync(TestBroker broker, params (string Subject, string Payload)[] expected)
    {
        await using var nats = new NatsConnection(new NatsOpts { Url = broker.Url });
        var js = new NatsJSContext(nats);
        await Eventually.AssertAsync(
            async () =>
            {
                var stream = await js.GetStreamAsync("$MQTT_rmsgs");
                if (stream.Info.State.Messages != expected.Length)
                {
                    return false;
                }

                try
                {
                    foreach (var (subject, payload) in expected)
                    {
                        var message = await stream.GetAsync(new StreamMsgGetRequest { LastBySubj = "$MQTT.rmsgs." + subject });
                        if (Encoding.UTF8.GetString(message.Message!.Data.Span) != payload)
                        {
                            return false;
                        }
                    }
                }
                catch (NatsJSApiException)
                {
                    // Not written yet (the count matched an earlier state).
                    return false;
                }

                return true;
            },
            "the retained messages in $MQTT_rmsgs");
    }

    private static (string Topic, string Payload) Text(MqttApplicationMessage message) => (message.Topic, Encoding.UTF8.GetString(message.Payload));
}
