namespace Broker.Adapters.Mqtt.Internal.Delivery;

/// <summary>
/// Where a connection's <see cref="OutboundQosFlow"/> is found: the connection makes it with the first QoS 1 or 2
/// delivery or acknowledgement, so a QoS 0 subscriber never holds one (issue 25); a flow made alone is its own source.
/// </summary>
internal interface IOutboundQosSource
{
    /// <summary>The connection's outbound QoS flow, made on first use.</summary>
    OutboundQosFlow OutboundQos { get; }
}
