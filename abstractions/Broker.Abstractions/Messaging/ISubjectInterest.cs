namespace Broker.Abstractions;

/// <summary>
/// Whether anything is subscribed to a subject right now (nats-server's interest check on the account's subject
/// index). JetStream uses it for push consumers, which deliver only while someone listens on their deliver subject.
/// The broker provides it as a service beside <see cref="IMessageBus"/>.
/// </summary>
/// <remarks>Thread-safe and cheap (the subject index caches matches).</remarks>
public interface ISubjectInterest
{
    /// <summary>Whether at least one subscription (plain or in a queue group) matches <paramref name="subject"/>.</summary>
    /// <param name="subject">A literal subject (UTF-8).</param>
    /// <returns>Whether someone would receive a message published to it.</returns>
    bool HasInterest(ReadOnlySpan<byte> subject);
}
