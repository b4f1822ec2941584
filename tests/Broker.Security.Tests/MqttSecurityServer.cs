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

    private readonly TempDirectory storeDirectory = new("mqtt-sec-");
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
                $"server_name: ref\njetstream {{ store_dir: \"{server.storeDirectory.Path}\" }}\nmqtt {{\n  listen: \"127.0.0.1:{server.MqttPort}\"\n{extra}}}\n");
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

        storeDirectory.Dispose();
    }
}
