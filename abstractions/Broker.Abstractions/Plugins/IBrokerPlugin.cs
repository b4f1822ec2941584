using Microsoft.Extensions.DependencyInjection;

namespace Broker.Abstractions;

/// <summary>
/// The startup type of a plugin. The broker creates it once, before it starts, and lets it register services.
/// </summary>
/// <remarks>
/// A plugin contributes by registering implementations of the contract interfaces:
/// <see cref="IProtocolHandler"/>, <see cref="IConnectionListenerFactory"/>, <see cref="IConnectionMiddleware"/>,
/// <see cref="ListenerDefinition"/> instances for the ports it serves, and
/// <see cref="Microsoft.Extensions.Hosting.IHostedService"/> for background work started and stopped with the broker.
/// The broker provides <see cref="IMessageBus"/> and <see cref="Microsoft.Extensions.Logging.ILoggerFactory"/>.
/// </remarks>
public interface IBrokerPlugin
{
    /// <summary>Registers the plugin's services.</summary>
    /// <param name="services">The broker's service collection.</param>
    /// <param name="context">The plugin's manifest and configuration section.</param>
    void ConfigureServices(IServiceCollection services, PluginContext context);
}
