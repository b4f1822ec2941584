using System.Buffers;
using System.Text;

namespace Broker.Abstractions;

/// <summary>Convenience overloads over <see cref="IBusClient"/> for callers holding strings.</summary>
public static class BusClientExtensions
{
    /// <summary>Publishes a payload to a subject, with an optional reply subject and no headers.</summary>
    /// <param name="client">The client.</param>
    /// <param name="subject">The subject.</param>
    /// <param name="payload">The payload.</param>
    /// <param name="replyTo">The reply subject, or <see langword="null"/>.</param>
    public static void Publish(this IBusClient client, string subject, ReadOnlyMemory<byte> payload, string? replyTo = null)
    {
        ArgumentNullException.ThrowIfNull(client);
        ArgumentNullException.ThrowIfNull(subject);
        client.Publish(
            Encoding.UTF8.GetBytes(subject),
            replyTo is null ? default : Encoding.UTF8.GetBytes(replyTo),
            ReadOnlySequence<byte>.Empty,
            new ReadOnlySequence<byte>(payload));
    }

    /// <summary>Sends a request without headers and waits for the first reply.</summary>
    /// <param name="client">The client.</param>
    /// <param name="subject">The subject.</param>
    /// <param name="payload">The payload.</param>
    /// <param name="timeout">How long to wait.</param>
    /// <param name="cancellationToken">Cancels the wait.</param>
    /// <returns>A copy of the reply.</returns>
    public static Task<BusReply> RequestAsync(this IBusClient client, string subject, ReadOnlyMemory<byte> payload, TimeSpan timeout, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(client);
        return client.RequestAsync(subject, ReadOnlyMemory<byte>.Empty, payload, timeout, cancellationToken);
    }
}
