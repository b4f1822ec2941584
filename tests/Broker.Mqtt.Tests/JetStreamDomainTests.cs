using System.Collections.Concurrent;
using System.Diagnostics;
using Broker.Adapters.Mqtt.Internal.Accounts;
using Broker.JetStream;
using Broker.Storage.MemStore;
using Broker.TestKit;
using MQTTnet.Formatter;
using MQTTnet.Protocol;
using NATS.Client.Core;
using NATS.Client.JetStream;
using static Broker.Mqtt.Tests.RawMqtt;

namespace Broker.Mqtt.Tests;

/// <summary>
/// Where and how long the adapter asks JetStream: <c>js_domain</c> sends its API requests to
/// <c>$JS.&lt;domain&gt;.API.</c> (served when the broker's <c>jetstream { domain }</c> is that domain; refused CONNECTs,
/// "server unavailable", when nobody serves it, even with a local JetStream), and <c>js_api_timeout</c> bounds each
/// request. A NATS client listening on the domain's API subjects sees the requests.
/// </summary>
public sealed class JetStreamDomainTests : IDisposable
{
    private readonly TempDirectory storeDirectory = new("mqtt-domain-");

    public void Dispose()
    {
        storeDirectory.Dispose();
    }

    [Fact(Timeout = 60_000)]
    public async Task With_js_domain_the_state_lives_in_that_domains_JetStream()
    {
        await using var broker = await MqttBroker.StartAsync(
            null,
            [new JetStreamPlugin(new JetStreamOptions { StoreDirectory = storeDirectory.Path, Domain = "hub" }), new MemoryStorePlugin()],
            ("js_domain", "hub"));
        await using var nats = new NatsConnection(new NatsOpts { Url = broker.Url });
        var requests = new ConcurrentQueue<string>();
        await using var observer = await nats.SubscribeCoreAsync<byte[]>("$JS.hub.API.>");
        _ = Task.Run(async () =>
        {
            await foreach (var message in observer.Msgs.ReadAllAsync())
            {
                requests.Enqueue(message.Subject);
            }
        });
        await nats.PingAsync();

        using var subscriber = await broker.ConnectAsync(MqttProtocolVersion.V311);
        var received = new Received(subscriber);
        await subscriber.SubscribeAsync("dom/#", MqttQualityOfServiceLevel.AtLeastOnce);
        using var publisher = await broker.ConnectAsync(MqttProtocolVersion.V500);
        await publisher.PublishAsync("dom/a", "kept", MqttQualityOfServiceLevel.AtLeastOnce, retain: true);
        var delivered = await received.NextAsync();
        Assert.Equal(("dom/a", MqttQualityOfServiceLevel.AtLeastOnce), (delivered.Topic, delivered.QualityOfServiceLevel));

        using var newcomer = await broker.ConnectAsync(MqttProtocolVersion.V500);
        var retained = new Received(newcomer);
        await newcomer.SubscribeAsync("dom/#");
        Assert.True((await retained.NextAsync()).Retain);

        Assert.Contains("$JS.hub.API.INFO", requests);
        Assert.Contains("$JS.hub.API.STREAM.INFO.$MQTT_sess", requests);
        Assert.Contains(requests, subject => subject.StartsWith("$JS.hub.API.CONSUMER.DURABLE.CREATE.$MQTT_msgs.", StringComparison.Ordinal));
        Assert.True(broker.Logs.Contains("MQTT state in JetStream domain hub: API requests go to $JS.hub.API.*"));
        await foreach (var name in new NatsJSContext(nats).ListStreamNamesAsync())
        {
            Assert.StartsWith("$MQTT_", name, StringComparison.Ordinal);
        }
    }

    [Fact(Timeout = 60_000)]
    public async Task A_domain_nobody_serves_refuses_connects_server_unavailable_even_with_a_local_JetStream()
    {
        await using var broker = await MqttBroker.StartAsync(
            null,
            [new JetStreamPlugin(new JetStreamOptions { StoreDirectory = storeDirectory.Path }), new MemoryStorePlugin()],
            ("js_domain", "nowhere"));

        await using (var raw = await ConnectAsync(broker.MqttEndPoint()))
        {
            await raw.SendAsync(Connect("unserved"));
            var (header, body) = await raw.ReadPacketAsync(MqttAccount.ReadyTimeout + TimeSpan.FromSeconds(5));
            Assert.Equal(0x20, header);
            Assert.Equal([0x00, 0x03], body);
            Assert.True(await raw.ClosedAsync());
        }

        // The operator sees where the adapter looked; the local JetStream was left alone.
        Assert.True(await Eventually.TrueAsync(() => broker.Logs.Contains("no responders on $JS.nowhere.API.INFO")), "no warning naming the domain's API");
        await using var nats = new NatsConnection(new NatsOpts { Url = broker.Url });
        await foreach (var name in new NatsJSContext(nats).ListStreamNamesAsync())
        {
            Assert.Fail("a stream in the local JetStream: " + name);
        }
    }

    [Fact(Timeout = 60_000)]
    public async Task Js_api_timeout_bounds_each_request()
    {
        // A domain whose API subjects have a listener that never answers: each request waits js_api_timeout, then the
        // adapter asks again (after 100 ms); with the default it would wait 4 s.
        await using var broker = await MqttBroker.StartAsync(("js_domain", "silent"), ("js_api_timeout", "300ms"));
        await using var nats = new NatsConnection(new NatsOpts { Url = broker.Url });
        var clock = Stopwatch.StartNew();
        var asked = new ConcurrentQueue<TimeSpan>();
        await using var silent = await nats.SubscribeCoreAsync<byte[]>("$JS.silent.API.INFO");
        _ = Task.Run(async () =>
        {
            await foreach (var _ in silent.Msgs.ReadAllAsync())
            {
                asked.Enqueue(clock.Elapsed);
            }
        });
        await nats.PingAsync();

        // The first CONNECT starts the loading; it is refused once the state did not come in time.
        await using var raw = await ConnectAsync(broker.MqttEndPoint());
        await raw.SendAsync(Connect("waiting"));
        Assert.True(await Eventually.TrueAsync(() => asked.Count >= 5), $"{asked.Count} INFO request(s)");

        var times = asked.ToArray();
        var gaps = times.Zip(times.Skip(1), (a, b) => b - a).ToArray();
        Assert.InRange(gaps.Min(), TimeSpan.FromMilliseconds(280), TimeSpan.FromSeconds(3));
    }
}
