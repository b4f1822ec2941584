namespace Broker.Adapters.Mqtt.Internal.Sessions;

/// <summary>
/// A client cannot be attached to its session: the state is not loaded yet or the store (JetStream) failed. The
/// CONNECT is refused with "server unavailable" (3.1.1 return code 3, MQTT 5 0x88), which clients retry.
/// </summary>
internal sealed class SessionStoreUnavailableException : Exception
{
    public SessionStoreUnavailableException()
    {
    }

    public SessionStoreUnavailableException(string message)
        : base(message)
    {
    }

    public SessionStoreUnavailableException(string message, Exception innerException)
        : base(message, innerException)
    {
    }
}
