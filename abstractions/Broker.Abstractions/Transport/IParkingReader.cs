using System.IO.Pipelines;

namespace Broker.Abstractions;

/// <summary>
/// A <see cref="PipeReader"/> whose read can wait with a callback and a state object instead of an awaiter: a mostly idle
/// connection's loop then waits without an async state machine of its own, and the callback, being the same for every
/// connection, is no object per connection either. An on-demand input (<see cref="IOnDemandTransport"/>) of the
/// broker's own sockets implements it; a reader that does not is read with <c>ReadAsync</c> as usual.
/// </summary>
/// <remarks>
/// One read at a time, as with <c>ReadAsync</c>: <see cref="TryReadOrPark"/> again only once the parked result was taken
/// and the buffer advanced. A read parked this way is woken by <see cref="PipeReader.CancelPendingRead"/> as a pending
/// <c>ReadAsync</c> is.
/// </remarks>
public interface IParkingReader
{
    /// <summary>
    /// Reads as <c>ReadAsync</c> without a cancellation token does. When a result is there now it is returned with
    /// <see langword="true"/>; otherwise <see langword="false"/> is returned and <paramref name="wake"/> is called with
    /// <paramref name="state"/> once a result is there (on the thread that completed the read, or a pool thread when it
    /// came before the callback was registered). The callback takes it with <see cref="TakeParkedResult"/>.
    /// </summary>
    bool TryReadOrPark(out ReadResult result, Action<object?> wake, object? state);

    /// <summary>The result of the read that parked and woke; once per wake.</summary>
    ReadResult TakeParkedResult();
}
