using System.Net;

namespace Broker.Abstractions;

/// <summary>A bound listener that accepts connections.</summary>
public interface IConnectionListener : IAsyncDisposable
{
    /// <summary>The bound endpoint (with the actual port when port 0 was asked for).</summary>
    EndPoint EndPoint { get; }

    /// <summary>Waits for the next connection.</summary>
    /// <param name="cancellationToken">Cancels the wait.</param>
    /// <returns>The connection, or <see langword="null"/> once the listener has been unbound.</returns>
    ValueTask<TransportConnection?> AcceptAsync(CancellationToken cancellationToken = default);

    /// <summary>Stops accepting; connections already accepted are unaffected.</summary>
    /// <param name="cancellationToken">Cancels the unbind.</param>
    /// <returns>A task that completes when the listener no longer accepts.</returns>
    ValueTask UnbindAsync(CancellationToken cancellationToken = default);
}
