using System.Buffers;

namespace Broker.Abstractions;

/// <summary>
/// Publishing a message routed by one subject but delivered under another: subscribers of <c>subject</c> receive it
/// with <c>deliverAs</c> in their MSG line. JetStream delivers a stored message this way to a consumer's deliver subject
/// or a pull request's inbox, carrying the subject it was stored under, exactly as nats-server does. Part of every
/// <see cref="IBusClient"/> (which extends it) since contract 1.2, so a caller never needs to discover it.
/// </summary>
public interface IDeliverAsPublisher
{
    /// <summary>Publishes a message routed by <paramref name="subject"/> and delivered as <paramref name="deliverAs"/>.</summary>
    /// <param name="subject">The subject that selects the subscribers (a literal).</param>
    /// <param name="deliverAs">The subject the subscribers see.</param>
    /// <param name="replyTo">The reply subject, or empty.</param>
    /// <param name="headers">A NATS header block, or empty.</param>
    /// <param name="payload">The payload.</param>
    void Publish(ReadOnlySpan<byte> subject, ReadOnlySpan<byte> deliverAs, ReadOnlySpan<byte> replyTo, in ReadOnlySequence<byte> headers, in ReadOnlySequence<byte> payload);
}
