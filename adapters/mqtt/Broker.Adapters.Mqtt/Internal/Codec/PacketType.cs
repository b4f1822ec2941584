namespace Broker.Adapters.Mqtt.Internal.Codec;

/// <summary>MQTT control packet types (the high nibble of the fixed header byte).</summary>
internal enum PacketType : byte
{
    Connect = 1,
    ConnAck = 2,
    Publish = 3,
    PubAck = 4,
    PubRec = 5,
    PubRel = 6,
    PubComp = 7,
    Subscribe = 8,
    SubAck = 9,
    Unsubscribe = 10,
    UnsubAck = 11,
    PingReq = 12,
    PingResp = 13,
    Disconnect = 14,
    Auth = 15,
}

/// <summary>The protocol levels this adapter speaks (CONNECT's protocol level byte).</summary>
internal enum ProtocolLevel : byte
{
    /// <summary>MQTT 3.1.1.</summary>
    V311 = 4,

    /// <summary>MQTT 5.0.</summary>
    V5 = 5,
}
