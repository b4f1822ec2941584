using System.Buffers;

namespace Broker.Abstractions;

/// <summary>
/// An in-process client of the broker: it publishes and subscribes like a NATS connection, without a socket.
/// </summary>
/// <remarks>
/// Handlers run on the publisher's thread, in the broker's delivery path: they must not block, and they must
/// copy what they keep because the message's memory is reused once they return.
/// </remarks>
public interface IBusClient : IAsyncDisposable
{
    /// <summary>Publishes a message.</summary>
    /// <param name="subject">The subject (UTF-8), a literal without wildcards.</param>
    /// <param name="replyTo">The reply subject (UTF-8), or empty.</param>
    /// <param name="headers">A NATS header block (<c>NATS/1.0\r\n...\r\n\r\n</c>), or empty.</param>
    /// <param name="payload">The payload.</param>
    /// <exception cref="ArgumentException">The subject is not a valid literal subject.</exception>
    /// <exception cref="ObjectDisposedException">The client was disposed.</exception>
    void Publish(ReadOnlySpan<byte> subject, ReadOnlySpan<byte> replyTo, in ReadOnlySequence<byte> headers, in ReadOnlySequence<byte> payload);

    /// <summary>Subscribes to a subject, optionally as a member of a queue group.</summary>
    /// <param name="subject">The subject; may contain <c>*</c> and <c>&gt;</c> wildcards.</param>
    /// <param name="queueGroup">The queue group, or <see langword="null"/>.</param>
    /// <param name="handler">Called for each message, on the publisher's thread.</param>
    /// <returns>The subscription; dispose it to unsubscribe.</returns>
    /// <exception cref="ArgumentException">The subject or queue group is invalid.</exception>
    IBusSubscription Subscribe(string subject, string? queueGroup, BusMessageHandler handler);

    /// <summary>
    /// Publishes a request with a fresh reply subject and waits for the first reply.
    /// </summary>
    /// <param name="subject">The subject.</param>
    /// <param name="headers">A NATS header block, or empty.</param>
    /// <param name="payload">The payload.</param>
    /// <param name="timeout">How long to wait for a reply.</param>
    /// <param name="cancellationToken">Cancels the wait.</param>
    /// <returns>A copy of the reply.</returns>
    /// <exception cref="NoRespondersException">No subscription matched the subject.</exception>
    /// <exception cref="TimeoutException">No reply arrived within <paramref name="timeout"/>.</exception>
    Task<BusReply> RequestAsync(string subject, ReadOnlyMemory<byte> headers, ReadOnlyMemory<byte> payload, TimeSpan timeout, CancellationToken cancellationToken = default);
}
