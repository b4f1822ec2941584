using System.Net;

namespace Broker.Abstractions;

/// <summary>Binds listeners of one transport kind (the in-box one is <c>"tcp"</c>).</summary>
public interface IConnectionListenerFactory
{
    /// <summary>The transport name that <see cref="ListenerDefinition.Transport"/> refers to.</summary>
    string Name { get; }

    /// <summary>Binds a listener.</summary>
    /// <param name="endPoint">Where to listen; an <see cref="IPEndPoint"/> with port 0 picks a free port.</param>
    /// <param name="settings">Limits for accepted connections.</param>
    /// <param name="cancellationToken">Cancels the bind.</param>
    /// <returns>The bound listener.</returns>
    ValueTask<IConnectionListener> BindAsync(EndPoint endPoint, TransportSettings settings, CancellationToken cancellationToken);
}
