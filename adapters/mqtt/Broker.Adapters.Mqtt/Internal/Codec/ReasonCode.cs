namespace Broker.Adapters.Mqtt.Internal.Codec;

/// <summary>
/// MQTT 5 reason codes (specification section 2.4) and the MQTT 3.1.1 CONNACK return codes this adapter sends.
/// </summary>
internal static class ReasonCode
{
    public const byte Success = 0x00;
    public const byte GrantedQos1 = 0x01;
    public const byte GrantedQos2 = 0x02;
    public const byte DisconnectWithWill = 0x04;
    public const byte NoMatchingSubscribers = 0x10;
    public const byte NoSubscriptionExisted = 0x11;
    public const byte UnspecifiedError = 0x80;
    public const byte MalformedPacket = 0x81;
    public const byte ProtocolError = 0x82;
    public const byte ImplementationSpecificError = 0x83;
    public const byte UnsupportedProtocolVersion = 0x84;
    public const byte ClientIdentifierNotValid = 0x85;
    public const byte BadUserNameOrPassword = 0x86;
    public const byte NotAuthorized = 0x87;
    public const byte ServerUnavailable = 0x88;
    public const byte ServerBusy = 0x89;
    public const byte BadAuthenticationMethod = 0x8C;
    public const byte KeepAliveTimeout = 0x8D;
    public const byte SessionTakenOver = 0x8E;
    public const byte TopicFilterInvalid = 0x8F;
    public const byte TopicNameInvalid = 0x90;
    public const byte PacketIdentifierInUse = 0x91;
    public const byte PacketIdentifierNotFound = 0x92;
    public const byte ReceiveMaximumExceeded = 0x93;
    public const byte TopicAliasInvalid = 0x94;
    public const byte PacketTooLarge = 0x95;
    public const byte QuotaExceeded = 0x97;
    public const byte AdministrativeAction = 0x98;
    public const byte PayloadFormatInvalid = 0x99;
    public const byte RetainNotSupported = 0x9A;
    public const byte QosNotSupported = 0x9B;
    public const byte SharedSubscriptionsNotSupported = 0x9E;
    public const byte SubscriptionIdentifiersNotSupported = 0xA1;
    public const byte WildcardSubscriptionsNotSupported = 0xA2;

    // MQTT 3.1.1 CONNACK return codes.
    public const byte V3UnacceptableProtocolVersion = 0x01;
    public const byte V3IdentifierRejected = 0x02;
    public const byte V3ServerUnavailable = 0x03;
    public const byte V3BadUserNameOrPassword = 0x04;
    public const byte V3NotAuthorized = 0x05;

    /// <summary>The MQTT 3.1.1 CONNACK return code closest to an MQTT 5 CONNACK reason code.</summary>
    public static byte ToV3ConnectReturnCode(byte reason) => reason switch
    {
        Success => Success,
        UnsupportedProtocolVersion => V3UnacceptableProtocolVersion,
        ClientIdentifierNotValid => V3IdentifierRejected,
        BadUserNameOrPassword => V3BadUserNameOrPassword,
        NotAuthorized => V3NotAuthorized,
        _ => V3ServerUnavailable,
    };
}
