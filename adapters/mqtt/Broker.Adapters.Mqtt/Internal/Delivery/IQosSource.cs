namespace Broker.Adapters.Mqtt.Internal.Delivery;

/// <summary>Where a connection finds QoS 1 and 2 delivery on JetStream, which comes once its stream is ready.</summary>
internal interface IQosSource
{
    /// <summary>QoS 1 and 2 delivery, or <see langword="null"/> without JetStream (or before its stream is ready).</summary>
    QosMessages? Qos { get; }

    /// <summary>
    /// The subscriptions whose consumers go when a session leaves them: by default all of them; an account keeps the
    /// shared subscriptions another session still holds.
    /// </summary>
    IEnumerable<Sessions.SubscriptionRecord> ReleasedBy(string clientId, IEnumerable<Sessions.SubscriptionRecord> subscriptions) => subscriptions;
}
