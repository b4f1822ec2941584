namespace Broker.Abstractions;

/// <summary>
/// Runs on a connection before its protocol handler: it may inspect it, refuse it, or wrap its pipe
/// (TLS is one). Listed by name in <see cref="ListenerDefinition.Middleware"/>.
/// </summary>
public interface IConnectionMiddleware
{
    /// <summary>The name listeners refer to.</summary>
    string Name { get; }

    /// <summary>Processes a newly accepted connection.</summary>
    /// <param name="connection">The connection.</param>
    /// <param name="cancellationToken">Cancelled when the broker stops.</param>
    /// <returns>
    /// The connection to hand on: the same one (possibly with a replaced <see cref="TransportConnection.Transport"/>),
    /// a wrapper around it, or <see langword="null"/> to refuse it (the broker then disposes it).
    /// </returns>
    ValueTask<TransportConnection?> OnConnectionAsync(TransportConnection connection, CancellationToken cancellationToken);
}
