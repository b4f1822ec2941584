namespace Broker.Abstractions;

/// <summary>
/// A connection's <see cref="TransportConnection.Transport"/> whose input and output can work on demand: the network is
/// read only while the application's <c>ReadAsync</c> waits, and output is buffered and sent only while there is some,
/// so an idle connection keeps no receive loop, send loop, pipe or buffer. The default (neither asked for) is a receive
/// loop that fills an input pipe ahead of the application and a send loop that drains an output pipe.
/// </summary>
/// <remarks>
/// On demand suits a protocol whose connections are mostly idle and whose reader handles one read at a time (MQTT), or
/// whose reader decodes and parses each read in turn on one loop (WebSocket over plain TCP asks for on-demand input).
/// The output keeps the <see cref="TransportConnection"/> output contract and <see cref="IPendingOutputFeature"/>.
/// Middleware that replaces <see cref="TransportConnection.Transport"/> (TLS) brings its own pipes, so the replaced
/// pipe does not implement this interface and the choice does not arise.
/// </remarks>
public interface IOnDemandTransport
{
    /// <summary>
    /// Makes <see cref="System.IO.Pipelines.IDuplexPipe.Input"/> read on demand. Call before the input is first used.
    /// </summary>
    /// <returns><see langword="false"/> when the input was already taken as a pipe (nothing changes then).</returns>
    bool UseOnDemandInput();

    /// <summary>
    /// Makes <see cref="System.IO.Pipelines.IDuplexPipe.Output"/> send on demand. Call before the output is first used.
    /// </summary>
    /// <returns><see langword="false"/> when the output was already taken as a pipe (nothing changes then).</returns>
    bool UseOnDemandOutput();
}
