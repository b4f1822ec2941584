using System.Net;
using Broker.Adapters.Mqtt;
using Broker.Adapters.Tls;
using Broker.Adapters.WebSocket;
using Broker.Core;
using Broker.TestKit;
using Microsoft.Extensions.Configuration;
using MQTTnet;
using MQTTnet.Formatter;

namespace Broker.Mqtt.Tests;

/// <summary>A <see cref="TestBroker"/> with the MQTT plugin on a free loopback port, and MQTTnet clients for it.</summary>
public static class MqttBroker
{
    public static readonly TimeSpan Timeout = TimeSpan.FromSeconds(10);

    /// <summary>Starts the broker; <paramref name="settings"/> are keys relative to <c>Plugins:Mqtt</c> (or absolute when they start with <c>Plugins:</c>).</summary>
    public static Task<TestBroker> StartAsync(params (string Key, string? Value)[] settings) => StartAsync(null, settings);

    public static Task<TestBroker> StartAsync(Action<BrokerOptions>? configure, params (string Key, string? Value)[] settings)
        => StartAsync(configure, [], settings);

    /// <summary>Starts the broker with <paramref name="plugins"/> after the MQTT, WebSocket and TLS plugins (as the host orders its plugin folders).</summary>
    public static Task<TestBroker> StartAsync(Action<BrokerOptions>? configure, IEnumerable<Broker.Abstractions.IBrokerPlugin> plugins, params (string Key, string? Value)[] settings)
    {
        var all = new Dictionary<string, string?>(StringComparer.OrdinalIgnoreCase)
        {
            ["Plugins:Mqtt:host"] = "127.0.0.1",
            ["Plugins:Mqtt:port"] = "-1",
        };
        foreach (var (key, value) in settings)
        {
            all[key.StartsWith("Plugins:", StringComparison.Ordinal) ? key : "Plugins:Mqtt:" + key] = value;
        }

        var configuration = new ConfigurationBuilder().AddInMemoryCollection(all.Where(p => p.Value is not null)).Build();
        return TestBroker.StartAsync(configure, [new MqttPlugin(), new WebSocketPlugin(), new TlsPlugin(), .. plugins], configuration);
    }

    public static int MqttPort(this TestBroker broker) => ((IPEndPoint)broker.Server.GetEndPoint(MqttPlugin.ListenerName)).Port;

    public static IPEndPoint MqttEndPoint(this TestBroker broker) => new(IPAddress.Loopback, broker.MqttPort());

    /// <summary>Connects an MQTTnet client with a clean session.</summary>
    public static async Task<IMqttClient> ConnectAsync(
        this TestBroker broker,
        MqttProtocolVersion version,
        string? clientId = null,
        Action<MqttClientOptionsBuilder>? configure = null)
    {
        var client = new MqttClientFactory().CreateMqttClient();
        var builder = new MqttClientOptionsBuilder()
            .WithTcpServer("127.0.0.1", broker.MqttPort())
            .WithProtocolVersion(version)
            .WithClientId(clientId ?? Guid.NewGuid().ToString("N"))
            .WithCleanSession()
            .WithTimeout(Timeout);
        configure?.Invoke(builder);
        using var cts = new CancellationTokenSource(Timeout);
        await client.ConnectAsync(builder.Build(), cts.Token);
        return client;
    }

    /// <summary>Connects a client that presents these credentials; returns the CONNACK's result code, however MQTTnet reports a refusal.</summary>
    public static async Task<MqttClientConnectResultCode> ConnectResultAsync(this TestBroker broker, MqttProtocolVersion version, string? user, string? password)
    {
        using var client = new MqttClientFactory().CreateMqttClient();
        using var cts = new CancellationTokenSource(Timeout);
        try
        {
            var builder = new MqttClientOptionsBuilder().WithTcpServer("127.0.0.1", broker.MqttPort()).WithProtocolVersion(version).WithTimeout(Timeout);
            if (user is not null)
            {
                builder.WithCredentials(user, password);
            }

            return (await client.ConnectAsync(builder.Build(), cts.Token)).ResultCode;
        }
        catch (MQTTnet.Adapter.MqttConnectingFailedException ex)
        {
            // MQTTnet throws for a refusal; the reason is only in the message.
            return Enum.GetValues<MqttClientConnectResultCode>().First(code => code != MqttClientConnectResultCode.Success && ex.Message.Contains(code.ToString(), StringComparison.Ordinal));
        }
    }

    public static async Task SubscribeAsync(this IMqttClient client, string filter, MQTTnet.Protocol.MqttQualityOfServiceLevel qos = MQTTnet.Protocol.MqttQualityOfServiceLevel.AtMostOnce)
    {
        using var cts = new CancellationTokenSource(Timeout);
        var result = await client.SubscribeAsync(new MqttClientSubscribeOptionsBuilder().WithTopicFilter(f => f.WithTopic(filter).WithQualityOfServiceLevel(qos)).Build(), cts.Token);
        Assert.All(result.Items, item => Assert.True((int)item.ResultCode < 0x80, $"{filter}: {item.ResultCode}"));
    }

    public static async Task PublishAsync(this IMqttClient client, string topic, string payload, MQTTnet.Protocol.MqttQualityOfServiceLevel qos = MQTTnet.Protocol.MqttQualityOfServiceLevel.AtMostOnce, bool retain = false)
    {
        using var cts = new CancellationTokenSource(Timeout);
        await client.PublishAsync(new MqttApplicationMessageBuilder().WithTopic(topic).WithPayload(payload).WithQualityOfServiceLevel(qos).WithRetainFlag(retain).Build(), cts.Token);
    }
}
