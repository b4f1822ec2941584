using System.Net.Security;
using System.Security.Authentication;
using System.Text;
using Broker.Abstractions;
using Broker.TestKit;
using NATS.Client.Core;

namespace Broker.Tls.Tests;

/// <summary>What is negotiated (versions, cipher suites), slow consumers through TLS, and a real NATS client.</summary>
public sealed class SessionTests
{
    [Fact(Timeout = 30_000)]
    public async Task Min_version_1_3_refuses_a_tls_1_2_client()
    {
        await using var broker = await TlsBroker.StartAsync(TlsBroker.Settings(("min_version", "1.3")));

        await using (var modern = await SecureClient.ConnectAsync(broker.Port))
        {
            Assert.Equal(SslProtocols.Tls13, modern.Ssl!.SslProtocol);
        }

        await using var old = await SecureClient.ConnectAsync(broker.Port, TlsStart.None);
        await Assert.ThrowsAnyAsync<Exception>(() => old.StartTlsAsync(protocols: SslProtocols.Tls12));
    }

    [Fact(Timeout = 30_000)]
    public async Task Cipher_suites_restrict_tls_1_2_to_the_listed_suite()
    {
        const string Suite = "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384";
        await using var broker = await TlsBroker.StartAsync(TlsBroker.Settings(("cipher_suites:0", Suite)));

        await using var client = await SecureClient.ConnectAsync(broker.Port, protocols: SslProtocols.Tls12);
        Assert.Equal(SslProtocols.Tls12, client.Ssl!.SslProtocol);
        Assert.Equal(Enum.Parse<TlsCipherSuite>(Suite), client.Ssl.NegotiatedCipherSuite);
        await client.SendAsync("PING\r\n");
        Assert.Equal("PONG", await client.ReadLineAsync());
    }

    [Fact(Timeout = 60_000)]
    public async Task A_tls_subscriber_that_stops_reading_is_closed_as_a_slow_consumer()
    {
        await using var broker = await TlsBroker.StartAsync(TlsBroker.Settings(), options =>
        {
            options.MaxPending = 256 * 1024;
            options.MaxPayload = 64 * 1024;
        });
        await using var stalled = await SecureClient.ConnectAsync(broker.Port);
        await stalled.SendAsync("CONNECT {\"verbose\":false}\r\nSUB flood 1\r\nPING\r\n");
        Assert.Equal("PONG", await stalled.ReadLineAsync());

        // Publish until the broker gives up on the subscriber that never reads; the socket buffers absorb some
        // megabytes first, so the bound is generous.
        await using var bus = broker.Bus.CreateClient();
        var payload = new byte[60 * 1024];
        var deadline = DateTime.UtcNow.AddSeconds(40);
        var published = 0L;
        while (!broker.Logs.Contains("slow consumer") && DateTime.UtcNow < deadline && published < 2L * 1024 * 1024 * 1024)
        {
            bus.Publish("flood", payload);
            published += payload.Length;
        }

        Assert.True(broker.Logs.Contains("slow consumer"), $"no slow consumer after {published} bytes");
        Assert.Contains(broker.Logs.Entries, e => e.Message.Contains("Slow Consumer (Pending Bytes)", StringComparison.Ordinal));
    }

    [Fact(Timeout = 30_000)]
    public async Task The_dotnet_client_connects_securely_and_exchanges_messages()
    {
        await using var broker = await TlsBroker.StartAsync(TlsBroker.Settings());
        await using var connection = await NatsClients.ConnectAsync(broker.Url, configure: o => o with
        {
            TlsOpts = new NatsTlsOpts { Mode = TlsMode.Require, CaFile = TestCertificates.Shared.CaFile },
        });
        var events = ClientEvents.Watch(connection);

        await using var subscription = await connection.SubscribeCoreAsync<string>("client.tls");
        await connection.PublishAsync("client.tls", "over tls");
        await connection.PingAsync();
        var message = await subscription.NextAsync();
        Assert.Equal("over tls", message.Data);
        Assert.True(connection.ServerInfo?.TlsRequired);
        Assert.Empty(events.ServerErrors);
        Assert.Empty(events.ClientProblems);
    }

    [Fact(Timeout = 30_000)]
    public async Task Other_protocols_get_tls_at_once_and_see_the_session_details()
    {
        await using var broker = await TlsBroker.StartAsync(
            TlsBroker.Settings(("listeners:0", "client"), ("listeners:1", EchoTlsPlugin.ListenerName)),
            extraPlugins: [new EchoTlsPlugin()]);
        var endPoint = (System.Net.IPEndPoint)broker.Server.GetEndPoint(EchoTlsPlugin.ListenerName);

        await using var client = await SecureClient.OpenAsync(endPoint.Port);
        await client.StartTlsAsync(protocols: SslProtocols.Tls12);
        var line = await client.ReadLineAsync();
        Assert.Equal($"Tls12 {client.Ssl!.NegotiatedCipherSuite} first=True", line);
    }

    /// <summary>A test protocol on its own listener that greets with what the TLS feature says.</summary>
    private sealed class EchoTlsPlugin : IBrokerPlugin, IProtocolHandler
    {
        public const string ListenerName = "echo-tls";

        public string Protocol => "echo-tls";

        public void ConfigureServices(Microsoft.Extensions.DependencyInjection.IServiceCollection services, PluginContext context)
        {
            Microsoft.Extensions.DependencyInjection.ServiceCollectionServiceExtensions.AddSingleton<IProtocolHandler>(services, this);
            Microsoft.Extensions.DependencyInjection.ServiceCollectionServiceExtensions.AddSingleton(services, new ListenerDefinition
            {
                Name = ListenerName,
                EndPoint = new System.Net.IPEndPoint(System.Net.IPAddress.Loopback, 0),
                Protocol = Protocol,
            });
        }

        public async Task OnConnectionAsync(TransportConnection connection, CancellationToken cancellationToken)
        {
            var tls = connection.Features.Get<ITlsConnectionFeature>();
            var text = tls is null ? "none\r\n" : $"{tls.Protocol} {tls.CipherSuite} first={tls.HandshakeFirst}\r\n";
            await connection.Transport.Output.WriteAsync(Encoding.ASCII.GetBytes(text), cancellationToken);
            await connection.Transport.Output.CompleteAsync();
            await connection.Transport.Input.CompleteAsync();
        }
    }
}
