using System.Net;
using Broker.Abstractions;
using Broker.Adapters.Mqtt;
using Broker.Adapters.Mqtt.Internal;
using Broker.Adapters.Mqtt.Internal.Connections;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;

// 1.3: the bus connections' accounts (IBusClient.Account, BusConnectOptions.Account); 1.4: ActivationKeys. Loaded for
// an mqtt { } block, or for a WebSocket listener, whose /mqtt path this plugin's handler serves.
[assembly: BrokerPlugin(typeof(MqttPlugin), Id = MqttPlugin.Id, MinimumContractVersion = "1.4", ActivationKeys = ["Plugins:WebSocket"])]

namespace Broker.Adapters.Mqtt;

/// <summary>
/// The MQTT plugin: MQTT 3.1.1 and 5 clients on the broker's subjects, mapped to and from NATS subjects exactly as
/// nats-server maps them, so MQTT devices and NATS services share one subject space. It registers the <c>"mqtt"</c>
/// protocol, which also serves the WebSocket plugin's <c>/mqtt</c> path, and, when a port is configured, a listener
/// named <c>"mqtt"</c> (TLS through the TLS plugin's middleware when the block has a <c>tls</c> section).
/// </summary>
public sealed class MqttPlugin : IBrokerPlugin
{
    /// <summary>The plugin id: its configuration section <c>Plugins:Mqtt</c> and its name in logs.</summary>
    public const string Id = "Mqtt";

    /// <summary>The listener name (<c>BrokerServer.GetEndPoint("mqtt")</c>).</summary>
    public const string ListenerName = "mqtt";

    /// <summary>The protocol name of the listener and of the handler the WebSocket plugin looks up for <c>/mqtt</c>.</summary>
    public const string ProtocolName = "mqtt";

    /// <inheritdoc/>
    public void ConfigureServices(IServiceCollection services, PluginContext context)
    {
        ArgumentNullException.ThrowIfNull(services);
        ArgumentNullException.ThrowIfNull(context);
        var options = MqttOptionsReader.Read(context.Configuration);
        // Each account's sessions and retained messages on its own JetStream when the broker runs it or js_domain names
        // one, in memory otherwise (MqttAccounts).
        services.AddSingleton(provider =>
        {
            var handler = new MqttProtocolHandler(
                options,
                provider.GetRequiredService<IMessageBus>(),
                provider.GetServices<ServerFeature>().Any(feature => feature.Name == ServerFeature.JetStream),
                provider.GetRequiredService<ILoggerFactory>().CreateLogger("Broker.Mqtt"));
            if (provider.GetService<IAccountDirectory>() is { } directory)
            {
                handler.Accounts.Watch(directory);
            }

            return handler;
        });
        services.AddSingleton<IProtocolHandler>(provider => provider.GetRequiredService<MqttProtocolHandler>());
        services.AddSingleton<IHostedService>(provider => provider.GetRequiredService<MqttProtocolHandler>());
        if (options.Port is not { } port)
        {
            return;
        }

        var definition = new ListenerDefinition
        {
            Name = ListenerName,
            EndPoint = new IPEndPoint(ParseHost(options.Host), Math.Max(port, 0)),
            Protocol = ProtocolName,
        };
        if (options.Tls)
        {
            definition = definition with
            {
                Middleware = ["tls"],
                MiddlewareConfiguration = new Dictionary<string, IConfiguration> { ["tls"] = context.Configuration.GetSection("tls") },
            };
        }

        services.AddSingleton(definition);
    }

    private static IPAddress ParseHost(string host)
    {
        if (IPAddress.TryParse(host, out var address))
        {
            return address;
        }

        return string.Equals(host, "localhost", StringComparison.OrdinalIgnoreCase)
            ? IPAddress.Loopback
            : Dns.GetHostAddresses(host).FirstOrDefault() ?? throw new InvalidOperationException($"Plugins:{Id}: cannot resolve host '{host}'");
    }
}
