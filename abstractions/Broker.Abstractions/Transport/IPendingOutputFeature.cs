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
}
