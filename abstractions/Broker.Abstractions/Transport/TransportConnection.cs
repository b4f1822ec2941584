using System.IO.Pipelines;
using System.Net;

namespace Broker.Abstractions;

/// <summary>
/// A connection produced by a listener: a duplex byte pipe, its endpoints and a bag of features.
/// </summary>
/// <remarks>
/// <para>
/// Output contract: writers append to <c>Transport.Output</c> and call <c>FlushAsync</c>. A flush must not wait
/// for the network; it completes synchronously unless three quarters of
/// <see cref="TransportSettings.MaxPendingOutputBytes"/> or more are buffered and not yet sent, in which case the
/// returned task completes only when the peer catches up: the broker then stalls fast producers briefly, and closes
/// the connection as a slow consumer once <see cref="IPendingOutputFeature"/> reports more than the limit.
/// A <see cref="System.IO.Pipelines.Pipe"/> created with <see cref="TransportSettings.CreateOutputPipeOptions"/>
/// and drained by a send loop satisfies this contract.
/// </para>
/// <para>
/// Completing <c>Transport.Output</c> asks the transport to send what is buffered and then close;
/// <see cref="Abort(string)"/> closes at once and drops buffered output.
/// </para>
/// </remarks>
public abstract class TransportConnection : IAsyncDisposable
{
    /// <summary>Creates a connection with its own, empty <see cref="Features"/>.</summary>
    protected TransportConnection()
        : this(new ConnectionFeatures())
    {
    }

    /// <summary>
    /// Creates a connection that shares a feature bag, so a connection wrapping another (TLS, WebSocket) exposes
    /// every feature set on the inner one and the inner one sees the wrapper's.
    /// </summary>
    /// <param name="features">The bag to share, normally the wrapped connection's <see cref="Features"/>.</param>
    protected TransportConnection(ConnectionFeatures features)
    {
        ArgumentNullException.ThrowIfNull(features);
        Features = features;
    }

    /// <summary>A process-unique id for logs.</summary>
    public abstract string ConnectionId { get; }

    /// <summary>The byte pipe to the peer. Middleware may replace it with one that wraps it.</summary>
    public abstract IDuplexPipe Transport { get; set; }

    /// <summary>The local endpoint, when the transport has one.</summary>
    public abstract EndPoint? LocalEndPoint { get; }

    /// <summary>The peer's endpoint, when the transport has one.</summary>
    public abstract EndPoint? RemoteEndPoint { get; }

    /// <summary>Settings the listener was bound with; middleware creating pipes must honour them.</summary>
    public abstract TransportSettings Settings { get; }

    /// <summary>
    /// Per-connection features set by the transport and middleware (TLS details, origin, ...). The broker sets the
    /// <see cref="ListenerDefinition"/> the connection was accepted on before any middleware runs.
    /// </summary>
    public ConnectionFeatures Features { get; }

    /// <summary>Cancelled once the connection has closed, whichever side closed it.</summary>
    public abstract CancellationToken ConnectionClosed { get; }

    /// <summary>
    /// Why the transport closed the connection by itself (for example a write deadline), or <see langword="null"/>.
    /// </summary>
    public virtual string? CloseReason => null;

    /// <summary>Closes the connection at once, dropping buffered output.</summary>
    /// <param name="reason">Why, for logs.</param>
    public abstract void Abort(string reason);

    /// <summary>Releases the connection; buffered output is sent first when the output was completed.</summary>
    /// <returns>A task that completes when the connection's resources are released.</returns>
    public abstract ValueTask DisposeAsync();
}
