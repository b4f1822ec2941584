namespace Broker.JetStream.Internal.Consumers;

/// <summary>
/// What the timers of a consumer's collaborators call back, on a timer thread without the consumer's lock: the
/// consumer takes its lock and asks the collaborator (<see cref="AckTracker.CheckPending"/>,
/// <see cref="PushDelivery.OnTimer"/>, <see cref="PullRequests.OnTimer"/>). The consumer itself is the target, so a
/// consumer holds no delegate per callback (two <c>Action</c>s were 128 B of every idle MQTT QoS 1 consumer, issue 25);
/// each timer is made only when first armed, with the target as its state.
/// </summary>
internal interface IConsumerTimers
{
    /// <summary>The ack tracker's redelivery timer fired.</summary>
    void OnPendingDue();

    /// <summary>The front end's timer fired (push: interest and idle heartbeats; pull: expiries and heartbeats).</summary>
    void OnFrontEndDue();
}
