using System.Net;
using System.Net.Sockets;
using System.Text;
using Broker.TestKit;
using MQTTnet;
using MQTTnet.Formatter;
using NATS.Client.Core;
using NATS.Client.JetStream;
using NATS.Client.JetStream.Models;

namespace Broker.Mqtt.Tests;

/// <summary>
/// The host executable as built, with <c>-js -sd DIR</c> and an <c>mqtt</c> block: a persistent session and retained
/// messages survive killing the process and starting it again on the same store directory (the file store).
/// </summary>
public sealed partial class HostRestartTests : IDisposable
{
    private readonly DirectoryInfo directory = Directory.CreateTempSubdirectory("mqtt-host-restart-");

    public void Dispose() => directory.Delete(recursive: true);

    [Fact(Timeout = 120_000)]
    public async Task Session_and_retained_messages_survive_killing_the_host()
    {
        var hostDll = HostDll();
        var store = Path.Combine(directory.FullName, "store");
        var (firstHost, natsPort, mqttPort) = await StartHostAsync(hostDll, store);
        await using (firstHost)
        {
            using (var durable = await ConnectAsync(mqttPort, "host-durable", clean: false))
            {
                await durable.SubscribeAsync("kept/#");
                await durable.DisconnectAsync();
            }

            using (var publisher = await ConnectAsync(mqttPort, "host-publisher", clean: true))
            {
                await publisher.PublishAsync("status/one", "on", retain: true);
                await publisher.PublishAsync("status/two", "gone", retain: true);
                await publisher.PublishAsync("status/two", "", retain: true);
            }

            // Stored in the background, in order: wait until JetStream has both retained messages (sequence 2) with the
            // second one deleted again (one message left), and the disconnected session. One message alone is also the
            // state after the first store, before "gone" and its deletion, which a kill would then split.
            await using var nats = new NatsConnection(new NatsOpts { Url = $"nats://127.0.0.1:{natsPort}" });
            var js = new NatsJSContext(nats);
            await Eventually.AssertAsync(
                async () =>
                {
                    var retainedState = (await js.GetStreamAsync("$MQTT_rmsgs")).Info.State;
                    if (retainedState.LastSeq < 2 || retainedState.Messages != 1)
                    {
                        return false;
                    }

                    try
                    {
                        var subject = Broker.Adapters.Mqtt.Internal.JetStream.JetStreamSessionStore.Subject("host-durable");
                        var session = await (await js.GetStreamAsync("$MQTT_sess")).GetAsync(new StreamMsgGetRequest { LastBySubj = subject });
                        return Encoding.UTF8.GetString(session.Message!.Data.Span).Contains("kept/#", StringComparison.Ordinal);
                    }
                    catch (NatsJSApiException)
                    {
                        return false;
                    }
                },
                "the session and retained message in JetStream");
        }

        (var secondHost, natsPort, mqttPort) = await StartHostAsync(hostDll, store);
        await using (secondHost)
        {
            var client = new MqttClientFactory().CreateMqttClient();
            using (client)
            {
                var received = new Received(client);
                var result = await client.ConnectAsync(Options(mqttPort, "host-durable", clean: false));
                Assert.True(result.IsSessionPresent);
                await using var nats = new NatsConnection(new NatsOpts { Url = $"nats://127.0.0.1:{natsPort}" });
                await nats.PublishAsync("kept.after", Encoding.UTF8.GetBytes("restart"));
                var message = await received.NextAsync();
                Assert.Equal(("kept/after", "restart"), (message.Topic, Encoding.UTF8.GetString(message.Payload)));
            }

            using var newcomer = await ConnectAsync(mqttPort, "host-newcomer", clean: true);
            var retained = new Received(newcomer);
            await newcomer.SubscribeAsync("status/#");
            var first = await retained.NextAsync();
            Assert.Equal(("status/one", "on", true), (first.Topic, Encoding.UTF8.GetString(first.Payload), first.Retain));
            await retained.NoneAsync();
        }
    }

    // Each start takes fresh ports: a port freed by the killed host, or picked free a while ago, can be taken meanwhile
    // by another test's connection (both come from the ephemeral range), and the start then fails to bind; it is tried
    // again on other ports, as a person restarting would.
    private async Task<(ExternalProcess Host, int NatsPort, int MqttPort)> StartHostAsync(string hostDll, string store, string mqttSettings = "")
    {
        for (var attempt = 1; ; attempt++)
        {
            var natsPort = Ports.GetFreePort();
            var mqttPort = Ports.GetFreePort();
            var config = Path.Combine(directory.FullName, "broker.conf");
            await File.WriteAllTextAsync(config, $$"""
                listen: 127.0.0.1:{{natsPort}}
                mqtt {
                  listen: "127.0.0.1:{{mqttPort}}"
                  {{mqttSettings}}
                }
                """);
            var host = ExternalProcess.Start("dotnet", [hostDll, "-c", config, "-js", "-sd", store]);
            if (await Eventually.TrueAsync(() => Ports.Accepts(mqttPort) || host.HasExited, TimeSpan.FromSeconds(30)) && !host.HasExited)
            {
                return (host, natsPort, mqttPort);
            }

            var log = host.ErrorText;
            await host.DisposeAsync();
            Assert.True(attempt < 3 && log.Contains("address already in use", StringComparison.Ordinal), log);
        }
    }

    private static string HostDll()
    {
        var configuration = new DirectoryInfo(Path.TrimEndingDirectorySeparator(AppContext.BaseDirectory)).Parent!.Name;
        var hostDll = RepositoryPaths.Combine("host", "Broker.Host", "bin", configuration, "net10.0", "Broker.Host.dll");
        Assert.True(File.Exists(hostDll), $"build the host first: {hostDll}");
        return hostDll;
    }

    private static MqttClientOptions Options(int port, string clientId, bool clean) => new MqttClientOptionsBuilder()
        .WithTcpServer("127.0.0.1", port).WithProtocolVersion(MqttProtocolVersion.V311).WithClientId(clientId)
        .WithCleanSession(clean).WithTimeout(MqttBroker.Timeout).Build();

    private static async Task<IMqttClient> ConnectAsync(int port, string clientId, bool clean)
    {
        var client = new MqttClientFactory().CreateMqttClient();
        using var cts = new CancellationTokenSource(MqttBroker.Timeout);
        await client.ConnectAsync(Options(port, clientId, clean), cts.Token);
        return client;
    }
}
