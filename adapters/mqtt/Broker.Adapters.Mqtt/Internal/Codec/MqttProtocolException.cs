namespace Broker.Adapters.Mqtt.Internal.Codec;

/// <summary>
/// A packet broke the protocol: the connection is closed, after an MQTT 5 DISCONNECT (or CONNACK during the connect)
/// carrying <see cref="Reason"/>. Thrown only on the way to closing, never on a path that continues.
/// </summary>
internal sealed class MqttProtocolException : Exception
{
    public MqttProtocolException(byte reason, string message)
        : base(message)
    {
        Reason = reason;
    }

    public MqttProtocolException()
        : this(ReasonCode.ProtocolError, "protocol error")
    {
    }

    public MqttProtocolException(string message)
        : this(ReasonCode.ProtocolError, message)
    {
    }

    public MqttProtocolException(string message, Exception innerException)
        : base(message, innerException)
    {
        Reason = ReasonCode.ProtocolError;
    }

    /// <summary>The MQTT 5 reason code (<see cref="ReasonCode"/>).</summary>
    public byte Reason { get; }

    public static MqttProtocolException Malformed(string message) => new(ReasonCode.MalformedPacket, message);

    public static MqttProtocolException Protocol(string message) => new(ReasonCode.ProtocolError, message);
}
