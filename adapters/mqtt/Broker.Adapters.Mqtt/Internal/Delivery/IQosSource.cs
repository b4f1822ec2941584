namespace Broker.Adapters.Mqtt.Internal.Delivery;

/// <summary>Where a connection finds QoS 1 and 2 delivery on JetStream, which comes once its stream is ready.</summary>
internal interface IQosSource
{
    /// <summary>QoS 1 and 2 delivery, or <see langword="null"/> without JetStream (or before its stream is ready).</summary>
    QosMessages? Qos { get; }
}
