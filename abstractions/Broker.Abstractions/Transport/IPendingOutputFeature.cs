namespace Broker.Abstractions;

/// <summary>
/// A connection feature (in <see cref="TransportConnection.Features"/>) reporting the bytes accepted for sending but
/// not sent yet: nats-server's <c>pending_bytes</c>. The broker closes a connection as a slow consumer when this
/// exceeds <see cref="TransportSettings.MaxPendingOutputBytes"/>. A transport or middleware that buffers output
/// should provide it (a wrapper adds its own buffered bytes to the inner connection's).
/// </summary>
public interface IPendingOutputFeature
{
    /// <summary>Bytes written to the output and not yet handed to the network.</summary>
    long PendingOutputBytes { get; }

    /// <summary>
    /// A task that completes once no more than <paramref name="bytes"/> wait (<see cref="PendingOutputBytes"/>, the
    /// layers below included); <see langword="null"/> when no more wait already, or when the output cannot tell when
    /// (the default). The broker stalls producers on it while a connection's layers together hold three quarters of
    /// max_pending or more, as it stalls them on a flush that does not complete: a wrapper's buffer (TLS, WebSocket)
    /// above the socket's takes flushes while the two together already hold that much. Without it, producers stall
    /// only on the flush. The task may never complete once the connection ends: wait on it with a bound.
    /// </summary>
    /// <param name="bytes">The most that may wait.</param>
    /// <returns>The task, or <see langword="null"/>.</returns>
    Task? WhenPendingAtMost(long bytes) => null;
}
