namespace Broker.Abstractions;

/// <summary>
/// Whether anything is subscribed to a subject right now (nats-server's interest check on the account's subject
/// index). JetStream uses it for push consumers, which deliver only while someone listens on their deliver subject.
/// The broker provides it as a service beside <see cref="IMessageBus"/>.
/// </summary>
/// <remarks>
/// Thread-safe and cheap (the subject index caches matches). It answers for the global account <c>$G</c> only, the one
/// account there is when none are configured: with accounts (contract 1.3), ask <see cref="IBusClient.HasInterest"/>
/// of a client in the account that matters.
/// </remarks>
public interface ISubjectInterest
{
    /// <summary>Whether at least one subscription (plain or in a queue group) of the global account <c>$G</c> matches <paramref name="subject"/>.</summary>
    /// <param name="subject">A literal subject (UTF-8).</param>
    /// <returns>Whether someone would receive a message published to it.</returns>
    bool HasInterest(ReadOnlySpan<byte> subject);
}
