using Broker.Abstractions;
using Broker.Adapters.Tls;
using Broker.Adapters.Tls.Internal;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging;

// nats-server's top-level allow_non_tls is a TLS setting here: a configuration file's value reaches Plugins:Tls.
// Loaded only when something asks for TLS: its own section (tls { }, allow_non_tls, --tls flags), a plugin's nested
// tls block (wss, MQTT over TLS: their listeners name the "tls" middleware) or HTTPS monitoring's middleware list.
[assembly: BrokerPlugin(typeof(TlsPlugin), Id = TlsPlugin.Id, ConfigurationKeys = ["allow_non_tls"],
    ActivationKeys = ["Plugins:*:tls", "Broker:Monitoring:Middleware"])]

namespace Broker.Adapters.Tls;

/// <summary>
/// The TLS plugin. It registers the <c>"tls"</c> connection middleware and adds it to the listeners named in
/// <c>Plugins:Tls:listeners</c> (default: the NATS client port) when <c>Plugins:Tls</c> is configured. Other plugins
/// ask for TLS by listing <c>"tls"</c> in their <see cref="ListenerDefinition.Middleware"/>, with their own settings
/// in <see cref="ListenerDefinition.MiddlewareConfiguration"/> (the WebSocket plugin passes its <c>tls</c> block).
/// </summary>
/// <remarks>
/// NATS listeners get nats-server's upgrade: INFO in clear text, then the handshake on the same socket
/// (<c>handshake_first</c> turns that around); every other protocol gets TLS as soon as the connection is accepted
/// (wss, https). Settings use nats-server's <c>tls { }</c> key names; see <see cref="TlsOptions"/>.
/// </remarks>
public sealed class TlsPlugin : IBrokerPlugin
{
    /// <summary>The plugin id: its configuration section <c>Plugins:Tls</c> and its name in logs.</summary>
    public const string Id = "Tls";

    /// <summary>The middleware name listeners refer to.</summary>
    public const string MiddlewareName = "tls";

    /// <inheritdoc/>
    public void ConfigureServices(IServiceCollection services, PluginContext context)
    {
        ArgumentNullException.ThrowIfNull(services);
        ArgumentNullException.ThrowIfNull(context);

        // Read now so a bad setting stops the broker before anything listens.
        var settings = TlsOptionsReader.Read(context.Configuration);
        services.AddSingleton(provider => new TlsMiddleware(settings, provider.GetRequiredService<ILoggerFactory>()));
        services.AddSingleton<IConnectionMiddleware>(provider => provider.GetRequiredService<TlsMiddleware>());
        services.AddSingleton<IListenerConfigurator>(provider => provider.GetRequiredService<TlsMiddleware>());
    }
}
