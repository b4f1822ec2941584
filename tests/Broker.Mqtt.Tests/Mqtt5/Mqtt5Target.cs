using System.Globalization;
using System.Net;
using System.Net.Sockets;
using Broker.JetStream;
using Broker.Storage.MemStore;
using Broker.TestKit;
using MQTTnet;
using MQTTnet.Formatter;

namespace Broker.Mqtt.Tests.Mqtt5;

/// <summary>Which MQTT 5 server a conformance scenario runs against.</summary>
public enum Mqtt5Server
{
    /// <summary>This broker, in-process, with JetStream on the memory store (QoS 1 and 2 on consumers).</summary>
    Broker,

    /// <summary>Mosquitto 2.0 (/usr/sbin/mosquitto), the bar MQTT 5 users hold the broker to.</summary>
    Mosquitto,
}

/// <summary>
/// One MQTT 5 server for one scenario: this broker or Mosquitto on a free loopback port, so a [Theory] over
/// <see cref="Mqtt5Server"/> checks the broker against the standard and against Mosquitto alike.
/// </summary>
public sealed class Mqtt5Target : IAsyncDisposable
{
    private readonly TempDirectory directory;
    private readonly ExternalProcess? mosquitto;

    private Mqtt5Target(Mqtt5Server kind, TempDirectory directory, TestBroker? broker, ExternalProcess? mosquitto, IPEndPoint endPoint)
    {
        Kind = kind;
        this.directory = directory;
        Broker = broker;
        this.mosquitto = mosquitto;
        EndPoint = endPoint;
    }

    public static TheoryData<Mqtt5Server> Servers => [Mqtt5Server.Broker, Mqtt5Server.Mosquitto];

    public Mqtt5Server Kind { get; }

    /// <summary>The broker, when <see cref="Kind"/> is <see cref="Mqtt5Server.Broker"/>.</summary>
    public TestBroker? Broker { get; }

    public IPEndPoint EndPoint { get; }

    /// <summary>
    /// Starts the server: <paramref name="brokerSettings"/> are the broker's <c>mqtt</c> keys, <paramref name="mosquittoLines"/>
    /// lines of mosquitto.conf with the same meaning.
    /// </summary>
    public static async Task<Mqtt5Target> StartAsync(Mqtt5Server kind, (string Key, string? Value)[]? brokerSettings = null, string[]? mosquittoLines = null)
    {
        var directory = new TempDirectory("mqtt5-");
        if (kind == Mqtt5Server.Broker)
        {
            var broker = await MqttBroker.StartAsync(null, [new JetStreamPlugin(new JetStreamOptions { StoreDirectory = directory.Path }), new MemoryStorePlugin()], brokerSettings ?? []);
            return new Mqtt5Target(kind, directory, broker, null, broker.MqttEndPoint());
        }

        var port = Ports.GetFreePort();
        var config = directory.Write("mosquitto.conf", string.Join('\n', [$"listener {port.ToString(CultureInfo.InvariantCulture)} 127.0.0.1", "allow_anonymous true", .. mosquittoLines ?? []]) + "\n");
        var process = ExternalProcess.Start("/usr/sbin/mosquitto", ["-c", config]);
        var endPoint = new IPEndPoint(IPAddress.Loopback, port);
        var target = new Mqtt5Target(kind, directory, null, process, endPoint);
        if (!await Eventually.TrueAsync(() => Accepts(endPoint), TimeSpan.FromSeconds(10)))
        {
            await target.DisposeAsync();
            throw new InvalidOperationException("mosquitto did not start: " + process.ErrorText);
        }

        return target;
    }

    /// <summary>Connects an MQTTnet client at MQTT 5 (clean start unless <paramref name="configure"/> says otherwise).</summary>
    public async Task<IMqttClient> ConnectAsync(string clientId, Action<MqttClientOptionsBuilder>? configure = null)
    {
        var client = new MqttClientFactory().CreateMqttClient();
        var builder = new MqttClientOptionsBuilder()
            .WithTcpServer(EndPoint.Address.ToString(), EndPoint.Port)
            .WithProtocolVersion(MqttProtocolVersion.V500)
            .WithClientId(clientId)
            .WithCleanStart()
            .WithTimeout(MqttBroker.Timeout);
        configure?.Invoke(builder);
        using var cts = new CancellationTokenSource(MqttBroker.Timeout);
        await client.ConnectAsync(builder.Build(), cts.Token);
        return client;
    }

    /// <summary>A raw socket connected with an MQTT 5 CONNECT whose CONNACK accepted.</summary>
    public Task<RawMqtt> RawAsync(string clientId, byte[]? properties = null) => RawMqtt.ConnectedAsync(EndPoint, clientId, level: 5, properties: properties);

    public async ValueTask DisposeAsync()
    {
        if (Broker is not null)
        {
            await Broker.DisposeAsync();
        }

        if (mosquitto is not null)
        {
            await mosquitto.DisposeAsync();
        }

        directory.Dispose();
    }

    private static bool Accepts(IPEndPoint endPoint)
    {
        try
        {
            using var socket = new Socket(SocketType.Stream, ProtocolType.Tcp);
            socket.Connect(endPoint);
            return true;
        }
        catch (SocketException)
        {
            return false;
        }
    }
}
