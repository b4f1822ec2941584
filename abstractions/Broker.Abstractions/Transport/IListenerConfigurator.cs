namespace Broker.Abstractions;

/// <summary>
/// Adjusts listener definitions before the broker binds them, so a plugin can attach itself to a port another
/// plugin (or the broker) defines. The TLS plugin uses it to add its middleware to the NATS client listener.
/// </summary>
/// <remarks>
/// The broker calls every registered configurator, in registration order, once per <see cref="ListenerDefinition"/>,
/// after all plugins have registered their services and before anything is bound. A configurator that throws stops
/// the broker from starting, so it is the place to reject settings that cannot work (a missing certificate).
/// </remarks>
public interface IListenerConfigurator
{
    /// <summary>Returns the definition to bind: the same one, or a copy changed with a <c>with</c> expression.</summary>
    /// <param name="definition">The definition as registered (and as earlier configurators left it).</param>
    /// <returns>The definition to use.</returns>
    ListenerDefinition Configure(ListenerDefinition definition);
}
