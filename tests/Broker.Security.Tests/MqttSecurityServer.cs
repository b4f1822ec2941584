using System.Net;
using Broker.Adapters.Mqtt;
using Broker.Core;
using Microsoft.Extensions.Configuration;
using MQTTnet;
using MQTTnet.Formatter;
using MQTTnet.Protocol;
using NATS.Client.Core;

namespace Broker.Security.Tests;

/// <summary>
/// Our broker with the MQTT plugin, or nats-server 2.9.10 with its MQTT listener (which needs JetStream and a server
/// name), both with the same users; MQTTnet clients and a NATS observer for them.
/// </summary>
internal sealed class MqttSecurityServer : IAsyncDisposable
{
    public static readonly TimeSpan Timeout = TimeSpan.FromSeconds(10);

    private readonly string storeDirectory = Path.Combine(Path.GetTempPath(), "mqtt-sec-" + Guid.NewGuid().ToString("N"));
    private TestBroker? ours;
    private ReferenceServer? reference;

    public ServerKind Kind { get; private set; }

    public int MqttPort { get; private set; }

    public string Url => ours?.Url ?? reference!.Url;

    public TestBroker? Ours => ours;

    public static async Task<MqttSecurityServer> StartAsync(ServerKind kind, IReadOnlyList<SecurityUser> users, params (string Key, string Value)[] mqttSettings) =>
        await StartAsync(kind, users, maxConnections: 0, maxSubscriptions: 0, mqttSettings);

    /// <summary>Starts the server; limits above 0 set max_connections and max_subscriptions on both.</summary>
    public static async Task<MqttSecurityServer> StartAsync(ServerKind kind, IReadOnlyList<SecurityUser> users, int maxConnections, int maxSubscriptions = 0, params (string Key, string Value)[] mqttSettings)
    {
        var server = new MqttSecurityServer { Kind = kind };
        if (kind == ServerKind.Ours)
        {
            var settings = new Dictionary<string, string?> { ["Plugins:Mqtt:host"] = "127.0.0.1", ["Plugins:Mqtt:port"] = "-1" };
            foreach (var (key, value) in mqttSettings)
            {
                settings["Plugins:Mqtt:" + key] = value;
            }

            var configuration = new ConfigurationBuilder().AddInMemoryCollection(settings).Build();
            server.ours = await TestBroker.StartAsync(
                o =>
                {
                    SecurityUsers.Apply(o, users);
                    if (maxConnections > 0)
                    {
                        o.MaxConnections = maxConnections;
                    }

                    o.MaxSubscriptions = maxSubscriptions;
                },
                [new MqttPlugin()],
                configuration);
            server.MqttPort = ((IPEndPoint)server.ours.Server.GetEndPoint(MqttPlugin.ListenerName)).Port;
        }
        else
        {
            server.MqttPort = Ports.GetFreePort();
            var extra = string.Concat(mqttSettings.Select(s => $"  {s.Key}: {s.Value}\n"));
            server.reference = await ReferenceServer.StartAsync(
                SecurityUsers.Conf(users) + (maxConnections > 0 ? $"max_connections: {maxConnections}\n" : string.Empty) +
                (maxSubscriptions > 0 ? $"max_subscriptions: {maxSubscriptions}\n" : string.Empty) +
                $"server_name: ref\njetstream {{ store_dir: \"{server.storeDirectory}\" }}\nmqtt {{\n  listen: \"127.0.0.1:{server.MqttPort}\"\n{extra}}}\n");
            await Ports.WaitUntilListeningAsync(server.MqttPort, Timeout);
        }

        return server;
    }

    /// <summary>A NATS connection as <paramref name="user"/> (the password is the name).</summary>
    public async Task<NatsConnection> NatsAsync(SecurityUser user)
    {
        var connection = new NatsConnection(new NatsOpts { Url = Url, AuthOpts = new NatsAuthOpts { Username = user.Name, Password = user.Name } });
        await connection.ConnectAsync();
        return connection;
    }

    /// <summary>An MQTTnet client logged in as <paramref name="user"/>, by default with a clean session and a fresh client id.</summary>
    public async Task<IMqttClient> MqttAsync(SecurityUser user, MqttProtocolVersion version = MqttProtocolVersion.V311, string? clientId = null, bool cleanSession = true)
    {
        var client = new MqttClientFactory().CreateMqttClient();
        using var cts = new CancellationTokenSource(Timeout);
        await client.ConnectAsync(
            new MqttClientOptionsBuilder().WithTcpServer("127.0.0.1", MqttPort).WithProtocolVersion(version)
                .WithClientId(clientId ?? user.Name + Guid.NewGuid().ToString("N")[..8]).WithCleanSession(cleanSession).WithCredentials(user.Name, user.Name).WithTimeout(Timeout).Build(),
            cts.Token);
        return client;
    }

    public async ValueTask DisposeAsync()
    {
        if (ours is not null)
        {
            await ours.DisposeAsync();
        }

        if (reference is not null)
        {
            await reference.DisposeAsync();
        }

        try
        {
            Directory.Delete(storeDirectory, recursive: true);
        }
        catch (DirectoryNotFoundException)
        {
        }
    }
}

/// <summary>What an MQTT client received, in order, as <c>topic=payload</c> (with <c>(r)</c> for retained).</summary>
internal sealed class MqttInbox
{
    private readonly System.Threading.Channels.Channel<string> messages = System.Threading.Channels.Channel.CreateUnbounded<string>();

    public MqttInbox(IMqttClient client)
    {
        client.ApplicationMessageReceivedAsync += e =>
        {
            var message = e.ApplicationMessage;
            messages.Writer.TryWrite($"{message.Topic}={message.ConvertPayloadToString()}{(message.Retain ? "(r)" : string.Empty)}");
            return Task.CompletedTask;
        };
    }

    /// <summary>Everything received up to and including the first message whose topic is <paramref name="sentinel"/>.</summary>
    public async Task<List<string>> UntilAsync(string sentinel)
    {
        var received = new List<string>();
        using var cts = new CancellationTokenSource(MqttSecurityServer.Timeout);
        while (true)
        {
            var next = await messages.Reader.ReadAsync(cts.Token);
            received.Add(next);
            if (next.StartsWith(sentinel + "=", StringComparison.Ordinal))
            {
                return received;
            }
        }
    }
}

/// <summary>MQTT helpers for the security tables.</summary>
internal static class MqttSecurity
{
    /// <summary>
    /// Subscribes to each filter (QoS 0) in its own SUBSCRIBE and returns the result codes. QoS 0, because nats-server
    /// also needs subscribe permission on its internal <c>$MQTT.sub.&gt;</c> for a QoS 1 subscription.
    /// </summary>
    public static async Task<List<MqttClientSubscribeResultCode>> SubscribeEachAsync(this IMqttClient client, params string[] filters)
    {
        var codes = new List<MqttClientSubscribeResultCode>();
        foreach (var filter in filters)
        {
            using var cts = new CancellationTokenSource(MqttSecurityServer.Timeout);
            var result = await client.SubscribeAsync(new MqttClientSubscribeOptionsBuilder().WithTopicFilter(f => f.WithTopic(filter).WithQualityOfServiceLevel(MqttQualityOfServiceLevel.AtMostOnce)).Build(), cts.Token);
            codes.Add(result.Items.Single().ResultCode);
        }

        return codes;
    }

    public static async Task<MqttClientPublishResult> SendAsync(this IMqttClient client, string topic, string payload, bool retain = false, MqttQualityOfServiceLevel qos = MqttQualityOfServiceLevel.AtLeastOnce)
    {
        using var cts = new CancellationTokenSource(MqttSecurityServer.Timeout);
        return await client.PublishAsync(new MqttApplicationMessageBuilder().WithTopic(topic).WithPayload(payload).WithQualityOfServiceLevel(qos).WithRetainFlag(retain).Build(), cts.Token);
    }
}
