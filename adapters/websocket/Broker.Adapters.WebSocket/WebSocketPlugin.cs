using System.Net;
using Broker.Abstractions;
using Broker.Adapters.WebSocket;
using Broker.Adapters.WebSocket.Internal;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging;

// nats-server also reads the websocket block as "ws". Without its section it listens on nothing, so it is loaded only
// with one.
[assembly: BrokerPlugin(typeof(WebSocketPlugin), Id = WebSocketPlugin.Id, ConfigurationAliases = ["ws"], ActivationKeys = [])]

namespace Broker.Adapters.WebSocket;

/// <summary>
/// The WebSocket plugin: a listener named <c>"websocket"</c> that upgrades HTTP requests (RFC 6455) and hands the
/// NATS byte stream carried in the frames to the broker's NATS protocol handler. TLS (wss) is the TLS plugin's
/// <c>"tls"</c> middleware with the <c>tls</c> block of <c>Plugins:WebSocket</c>; nats-server refuses to start a
/// WebSocket listener without TLS unless <c>no_tls</c>, and so do we.
/// </summary>
public sealed class WebSocketPlugin : IBrokerPlugin
{
    /// <summary>The plugin id: its configuration section <c>Plugins:WebSocket</c> and its name in logs.</summary>
    public const string Id = "WebSocket";

    /// <summary>The listener name (<c>BrokerServer.GetEndPoint("websocket")</c>).</summary>
    public const string ListenerName = "websocket";

    /// <summary>The protocol name of the listener.</summary>
    public const string ProtocolName = "websocket";

    /// <inheritdoc/>
    public void ConfigureServices(IServiceCollection services, PluginContext context)
    {
        ArgumentNullException.ThrowIfNull(services);
        ArgumentNullException.ThrowIfNull(context);
        var options = WebSocketOptionsReader.Read(context.Configuration);
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
        if (!options.NoTls)
        {
            definition = definition with
            {
                Middleware = ["tls"],
                MiddlewareConfiguration = new Dictionary<string, IConfiguration> { ["tls"] = context.Configuration.GetSection("tls") },
            };
        }

        services.AddSingleton(definition);
        services.AddSingleton<IProtocolHandler>(provider => new WebSocketProtocolHandler(
            options, provider, provider.GetRequiredService<ILoggerFactory>().CreateLogger("Broker.WebSocket")));
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
