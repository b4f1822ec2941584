using Broker.Core;
using Broker.Core.Auth;
using Broker.JetStream;
using Broker.Storage.FileStore;
using Broker.TestKit;
using MQTTnet;
using MQTTnet.Formatter;
using NATS.Client.Core;

namespace Broker.Mqtt.Tests;

/// <summary>
/// Our broker (MQTT, JetStream on the file store) or nats-server 2.9.10 with the same configuration: accounts A (with
/// JetStream, user a) and B (user b, JetStream when asked), user g in <c>$G</c>, which has no JetStream once accounts
/// are configured, and user s in the system account SYS, which never has JetStream. Restartable on the same store directory; MQTTnet and NATS clients as those users (the
/// password is the user name).
/// </summary>
internal sealed class AccountMqttServer : IAsyncDisposable
{
    private readonly TempDirectory storeDirectory = new("mqtt-acc-");
    private TestBroker? ours;
    private ReferenceServer? reference;

    private AccountMqttServer(ServerKind kind, bool bHasJetStream, string? mappingsOfA)
    {
        Kind = kind;
        BHasJetStream = bHasJetStream;
        MappingsOfA = mappingsOfA;
    }

    public ServerKind Kind { get; }

    public bool AHasJetStream { get; private set; } = true;

    public bool BHasJetStream { get; }

    /// <summary>A mapping of account A, <c>"source": "destination"</c>, or null.</summary>
    public string? MappingsOfA { get; }

    public int MqttPort { get; private set; }

    public string Url => ours?.Url ?? reference!.Url;

    public TestBroker? Ours => ours;

    public static async Task<AccountMqttServer> StartAsync(ServerKind kind, bool bHasJetStream = true, string? mappingsOfA = null)
    {
        var server = new AccountMqttServer(kind, bHasJetStream, mappingsOfA);
        await server.StartAsync();
        return server;
    }

    /// <summary>Stops the server and starts it again on the same store directory.</summary>
    public async Task RestartAsync()
    {
        await StopAsync();
        await StartAsync();
    }

    /// <summary>An MQTTnet client of <paramref name="user"/>, its messages recorded from before it connects.</summary>
    public async Task<Device> MqttAsync(string user, string clientId, bool cleanSession = true, MqttProtocolVersion version = MqttProtocolVersion.V311)
    {
        var client = new MqttClientFactory().CreateMqttClient();
        var received = new Received(client);
        using var cts = new CancellationTokenSource(MqttBroker.Timeout);
        var builder = new MqttClientOptionsBuilder().WithTcpServer("127.0.0.1", MqttPort).WithProtocolVersion(version)
            .WithClientId(clientId).WithCleanSession(cleanSession).WithCredentials(user, user).WithTimeout(MqttBroker.Timeout);
        if (version == MqttProtocolVersion.V500 && !cleanSession)
        {
            builder.WithSessionExpiryInterval(uint.MaxValue);
        }

        var result = await client.ConnectAsync(builder.Build(), cts.Token);
        return new Device(client, result.IsSessionPresent, received);
    }

    /// <summary>Ours only: reloads the configuration with A's JetStream on or off.</summary>
    public async Task ReloadAsync(bool aHasJetStream)
    {
        AHasJetStream = aHasJetStream;
        var options = new BrokerOptions { Host = "127.0.0.1", Port = ours!.Port };
        Configure(options);
        Assert.True((await ours.Server.ReloadAsync(options)).Succeeded);
    }

    public async Task<NatsConnection> NatsAsync(string user)
    {
        var connection = new NatsConnection(new NatsOpts { Url = Url, AuthOpts = new NatsAuthOpts { Username = user, Password = user } });
        await connection.ConnectAsync();
        return connection;
    }

    public async ValueTask DisposeAsync()
    {
        await StopAsync();
        storeDirectory.Dispose();
    }

    private async Task StartAsync()
    {
        if (Kind == ServerKind.Ours)
        {
            ours = await MqttBroker.StartAsync(Configure, [new JetStreamPlugin(new JetStreamOptions { StoreDirectory = storeDirectory.Path }), new FileStorePlugin()]);
            MqttPort = ours.MqttPort();
            return;
        }

        MqttPort = Ports.GetFreePort();
        var mappings = MappingsOfA is null ? "" : $", mappings: {{ {MappingsOfA} }}";
        reference = await ReferenceServer.StartAsync(
            "server_name: ref\n" +
            $"jetstream {{ store_dir: \"{storeDirectory.Path}\" }}\n" +
            "accounts {\n" +
            $"  A: {{ jetstream: enabled, users: [{{ user: a, password: a }}]{mappings} }}\n" +
            $"  B: {{ {(BHasJetStream ? "jetstream: enabled, " : "")}users: [{{ user: b, password: b }}] }}\n" +
            "  SYS: { users: [{ user: s, password: s }] }\n" +
            "}\n" +
            "system_account: SYS\n" +
            "authorization { users: [{ user: g, password: g }] }\n" +
            $"mqtt {{ listen: \"127.0.0.1:{MqttPort}\" }}\n");
        await Ports.WaitUntilListeningAsync(MqttPort, MqttBroker.Timeout);
    }

    private void Configure(BrokerOptions options)
    {
        options.Authorization.Users = [new UserOptions { User = "g", Password = "g" }];
        options.Accounts =
        [
            new AccountOptions { Name = "A", Users = [new UserOptions { User = "a", Password = "a" }], JetStream = AHasJetStream ? new AccountJetStreamOptions() : null },
            new AccountOptions { Name = "B", Users = [new UserOptions { User = "b", Password = "b" }], JetStream = BHasJetStream ? new AccountJetStreamOptions() : null },
            new AccountOptions { Name = "SYS", Users = [new UserOptions { User = "s", Password = "s" }] },
        ];
        options.SystemAccount = "SYS";
        options.Monitoring.Host = "127.0.0.1";
        options.Monitoring.Port = 0;
        if (MappingsOfA is not null)
        {
            var parts = MappingsOfA.Split(':', 2, StringSplitOptions.TrimEntries);
            options.Accounts[0].Mappings = [new MappingOptions { Source = parts[0].Trim('"'), Destinations = [new MappingDestinationOptions { Subject = parts[1].Trim('"') }] }];
        }
    }

    private async Task StopAsync()
    {
        if (ours is not null)
        {
            await ours.DisposeAsync();
            ours = null;
        }

        if (reference is not null)
        {
            await reference.DisposeAsync();
            reference = null;
        }
    }
}

/// <summary>A connected MQTTnet client, whether it resumed a session, and what it receives.</summary>
internal sealed record Device(IMqttClient Client, bool SessionPresent, Received Received) : IDisposable
{
    public void Dispose() => Client.Dispose();
}
