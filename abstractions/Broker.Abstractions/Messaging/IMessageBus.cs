namespace Broker.Abstractions;

/// <summary>
/// The broker's subject space seen from inside the process: plugins and embedding applications open
/// clients on it to publish and subscribe exactly as NATS connections do.
/// </summary>
public interface IMessageBus
{
    /// <summary>Opens an in-process client.</summary>
    /// <param name="options">Client options; defaults when <see langword="null"/>.</param>
    /// <returns>The client; dispose it to remove its subscriptions.</returns>
    IBusClient CreateClient(BusClientOptions? options = null);
}
