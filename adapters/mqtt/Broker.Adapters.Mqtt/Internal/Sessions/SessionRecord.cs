namespace Broker.Adapters.Mqtt.Internal.Sessions;

/// <summary>One subscription of a session, as stored: the topic filter as the client sent it and its options.</summary>
/// <param name="Filter">The MQTT topic filter, <c>$share/&lt;group&gt;/</c> prefix included.</param>
/// <param name="Qos">The granted QoS.</param>
/// <param name="NoLocal">MQTT 5: the client's own publishes are not delivered to it.</param>
/// <param name="RetainAsPublished">MQTT 5: forwarded messages keep their RETAIN flag.</param>
/// <param name="RetainHandling">MQTT 5: 0 send retained messages on subscribe, 1 only for a new subscription, 2 never.</param>
/// <param name="Identifier">MQTT 5 subscription identifier, or 0.</param>
/// <param name="Consumer">
/// The durable JetStream consumer on <c>$MQTT_msgs</c> that delivers its QoS 1 and 2 messages, or <see langword="null"/>
/// for a QoS 0 subscription (nats-server's <c>mqttSubscription</c> consumer, <c>&lt;session hash&gt;_&lt;nuid&gt;</c>).
/// </param>
/// <param name="DeliverSubject">The consumer's deliver subject (<c>$MQTT.sub.&lt;nuid&gt;</c>), or <see langword="null"/>.</param>
internal sealed record SubscriptionRecord(string Filter, byte Qos, bool NoLocal, bool RetainAsPublished, byte RetainHandling, int Identifier, string? Consumer = null, string? DeliverSubject = null);

/// <summary>
/// A shared subscription's QoS 2 delivery kept for the session (<see cref="SessionRecord.Kept"/>): the message as its
/// consumer delivered it, taken off the consumer so no other member gets it.
/// </summary>
/// <param name="Filter">The subscription's filter (<c>$share/&lt;group&gt;/...</c>).</param>
/// <param name="Subject">The message's NATS subject.</param>
/// <param name="Headers">Its NATS header block (empty when none).</param>
/// <param name="Payload">Its payload.</param>
/// <param name="Sequence">Its sequence in <c>$MQTT_msgs</c>, which tells the kept deliveries apart.</param>
internal sealed record KeptDelivery(string Filter, string Subject, byte[] Headers, byte[] Payload, ulong Sequence);

/// <summary>
/// What survives of a session between connections: its subscriptions and how long it outlives a disconnect. The
/// shape of nats-server's <c>mqttPersistedSession</c> (<c>$MQTT_sess</c> stream, one record per client id).
/// </summary>
/// <param name="ClientId">The client identifier.</param>
/// <param name="Subscriptions">The subscriptions, by topic filter.</param>
/// <param name="ExpiryInterval">
/// Seconds the session outlives a disconnect: 0 none, <see cref="uint.MaxValue"/> for ever (MQTT 3.1.1 clean session
/// false).
/// </param>
/// <param name="Releasing">
/// Packet identifiers of QoS 2 messages sent to the client whose PUBREC came and whose PUBCOMP has not: PUBREL is sent
/// again on reconnect (MQTT-4.4.0-1). nats-server keeps them in <c>$MQTT_out</c>.
/// </param>
/// <param name="Kept">
/// QoS 2 messages of shared subscriptions sent to the client and not PUBREC'd when its connection closed: they stay
/// with the session and are sent again (DUP) when it reconnects, never to another member (MQTT-4.8.2-4, -5).
/// </param>
internal sealed record SessionRecord(string ClientId, IReadOnlyList<SubscriptionRecord> Subscriptions, uint ExpiryInterval, IReadOnlyList<ushort>? Releasing = null, IReadOnlyList<KeptDelivery>? Kept = null)
{
    /// <summary>
    /// Unix milliseconds of the disconnect that stored the record, or 0 while connected: a session read back after a
    /// restart that has expired since is forgotten.
    /// </summary>
    public long DisconnectedAt { get; init; }
}

/// <summary>
/// Where sessions are kept (memory, or JetStream's <c>$MQTT_sess</c>: Internal/JetStream/JetStreamSessionStore). The
/// adapter calls it on connect, on subscription changes and on disconnect, and for persistent sessions once per
/// incoming QoS 2 publish and once per its PUBREL, so an implementation may make network round trips (JetStream).
/// </summary>
internal interface ISessionStore
{
    /// <summary>The stored session of <paramref name="clientId"/>, or <see langword="null"/>.</summary>
    ValueTask<SessionRecord?> LoadAsync(string clientId, CancellationToken cancellationToken);

    /// <summary>Stores (replaces) a session.</summary>
    ValueTask SaveAsync(SessionRecord record, CancellationToken cancellationToken);

    /// <summary>Forgets a session; nothing happens when none is stored.</summary>
    ValueTask DeleteAsync(string clientId, CancellationToken cancellationToken);

    /// <summary>
    /// Whether the store keeps a persistent session's incoming QoS 2 publishes from PUBREC to PUBREL across a restart
    /// (<see cref="HoldAsync"/>): they are then delivered at PUBREL (the specification's method A); otherwise at PUBLISH,
    /// their identifiers kept in the session's memory until PUBREL (method B).
    /// </summary>
    bool HoldsQos2 { get; }

    /// <summary>
    /// Stores an incoming QoS 2 publish of a persistent session until its PUBREL (sets <see cref="HeldPublish.Sequence"/>
    /// and <see cref="HeldPublish.Stored"/>); PUBREC waits for it.
    /// </summary>
    Task HoldAsync(string clientId, HeldPublish held);

    /// <summary>Forgets what <see cref="HoldAsync"/> stored (PUBREL received and the message delivered); PUBCOMP waits for it.</summary>
    Task ReleaseAsync(string clientId, HeldPublish held);

    /// <summary>The held publishes of a stored session (read when it is resumed after a restart).</summary>
    ValueTask<IReadOnlyCollection<HeldPublish>> LoadHeldAsync(string clientId, CancellationToken cancellationToken);
}
