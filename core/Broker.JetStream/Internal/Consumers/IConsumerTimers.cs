using Broker.Abstractions;

namespace Broker.JetStream.Internal.Consumers;

/// <summary>
/// What the timers of a consumer's collaborators call back (and where the ack tracker's events go,
/// <see cref="Events"/>), on a timer thread without the consumer's lock: the consumer takes its lock and asks the
/// collaborator (<see cref="AckTracker.CheckPending"/>, <see cref="PushDelivery.OnTimer"/>, <see cref="PullRequests.OnTimer"/>). The consumer itself is the target, so a
/// consumer holds no delegate per callback (two <c>Action</c>s were 128 B of every idle MQTT QoS 1 consumer, issue 25);
/// each timer is made only when first armed, with the target as its state. A collaborator also reads the consumer's
/// names, interest check and outbox through it rather than holding them (8 B a field of 10,000 idle consumers).
/// </summary>
internal interface IConsumerTimers
{
    /// <summary>The ack tracker's redelivery timer fired.</summary>
    void OnPendingDue();

    /// <summary>The front end's timer fired (push: interest and idle heartbeats; pull: expiries and heartbeats).</summary>
    void OnFrontEndDue();

    /// <summary>
    /// Where the ack tracker's advisories and ack metrics go, made with the first (an idle consumer, an MQTT QoS 1
    /// subscription's, holds none: 70 B, issue 25). Called with the consumer's lock held.
    /// </summary>
    ConsumerEvents Events { get; }

    /// <summary>The consumer's stream's name.</summary>
    string StreamName { get; }

    /// <summary>The consumer's name.</summary>
    string Name { get; }

    /// <summary>Whether someone subscribes to a subject (null: always).</summary>
    ISubjectInterest? Interest { get; }

    /// <summary>Where control messages go, made with the first (an idle push consumer holds none). Lock held.</summary>
    ConsumerOutbox Outbox { get; }
}
