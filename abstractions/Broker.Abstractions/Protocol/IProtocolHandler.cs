namespace Broker.Abstractions;

/// <summary>
/// Serves connections that speak one protocol. The broker's NATS client protocol is one; a plugin may add others
/// and reach the broker through <see cref="IMessageBus"/>.
/// </summary>
public interface IProtocolHandler
{
    /// <summary>The protocol name that <see cref="ListenerDefinition.Protocol"/> refers to.</summary>
    string Protocol { get; }

    /// <summary>Serves one connection until it closes. The broker disposes the connection afterwards.</summary>
    /// <param name="connection">The accepted connection, after middleware.</param>
    /// <param name="cancellationToken">Cancelled when the broker stops.</param>
    /// <returns>A task that completes when the handler is done with the connection.</returns>
    Task OnConnectionAsync(TransportConnection connection, CancellationToken cancellationToken);
}
