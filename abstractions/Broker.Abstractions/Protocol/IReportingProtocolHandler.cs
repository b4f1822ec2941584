namespace Broker.Abstractions;

/// <summary>
/// A protocol handler that reports the end of each connection it serves itself (<see cref="IServedConnectionEnd"/>)
/// instead of the broker waiting on the task <see cref="IProtocolHandler.OnConnectionAsync"/> returns: the broker then
/// keeps no continuation per connection (a delegate and its state, ~110 B per idle connection). Optional: the broker
/// uses it for connections its listener hands over without middleware, and <see cref="IProtocolHandler.OnConnectionAsync"/>
/// everywhere else (and other callers, such as a WebSocket upgrade, always use that).
/// </summary>
public interface IReportingProtocolHandler : IProtocolHandler
{
    /// <summary>
    /// Starts serving <paramref name="connection"/> and returns; calls <see cref="IServedConnectionEnd.Ended"/> on
    /// <paramref name="served"/> exactly once when done with it (not when this method throws). The broker disposes the
    /// connection afterwards.
    /// </summary>
    /// <param name="connection">The accepted connection.</param>
    /// <param name="served">Told when the handler is done with the connection.</param>
    /// <param name="cancellationToken">Cancelled when the broker stops.</param>
    void Serve(TransportConnection connection, IServedConnectionEnd served, CancellationToken cancellationToken);
}

/// <summary>Told by an <see cref="IReportingProtocolHandler"/> when it is done with a connection it serves.</summary>
public interface IServedConnectionEnd
{
    /// <summary>The handler is done with <paramref name="connection"/>; the broker disposes it.</summary>
    /// <param name="connection">The connection the handler was given.</param>
    /// <param name="failure">What ended the handling unexpectedly (the broker logs it), or <see langword="null"/>.</param>
    void Ended(TransportConnection connection, Exception? failure);
}
