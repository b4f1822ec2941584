namespace Broker.Adapters.Mqtt;

/// <summary>
/// Settings of the MQTT listener, read from <c>Plugins:Mqtt</c> (the <c>mqtt { }</c> block of a configuration file)
/// with nats-server's key names in brackets. The listener runs only when a port is configured.
/// </summary>
public sealed class MqttOptions
{
    /// <summary>Interface to bind [<c>host</c>, or the host part of <c>listen</c>]. Default <c>0.0.0.0</c>.</summary>
    public string Host { get; set; } = "0.0.0.0";

    /// <summary>Port [<c>port</c>, or the port part of <c>listen</c>]; 0 or -1 picks a free port. Default none: no listener.</summary>
    public int? Port { get; set; }

    /// <summary>
    /// User name every MQTT client must give [<c>authorization { username }</c>]; with <see cref="Password"/>.
    /// Default none. Only when the broker itself has no users, as nats-server requires.
    /// </summary>
    public string? Username { get; set; }

    /// <summary>Password for <see cref="Username"/> [<c>authorization { password }</c>]. Default none.</summary>
    public string? Password { get; set; }

    /// <summary>Token every MQTT client must give as its password [<c>authorization { token }</c>]. Default none.</summary>
    public string? Token { get; set; }

    /// <summary>
    /// The broker account the clients admitted by <see cref="Username"/> or <see cref="Token"/> are in
    /// [<c>authorization { account }</c>, ours: nats-server has no such key and puts them in the global account]: they
    /// publish and subscribe in that account's subject space only. While the broker has no account by that name (a
    /// reload removed it, or a misspelling), their CONNECTs are refused with "server unavailable". Default none:
    /// the global account <c>$G</c>, as in nats-server.
    /// </summary>
    public string? Account { get; set; }

    /// <summary>
    /// How long a client may take to send CONNECT [<c>authorization { timeout }</c>, seconds or a duration]. Default 2
    /// seconds (nats-server's authentication timeout; nats-server applies it only when authentication is required).
    /// </summary>
    public TimeSpan ConnectTimeout { get; set; } = TimeSpan.FromSeconds(2);

    /// <summary>
    /// The broker user (of the top-level <c>authorization { users }</c>) a client that sends no credentials is bound to,
    /// in place of the broker's own <c>no_auth_user</c> [<c>no_auth_user</c>]; a name that is not a broker user refuses
    /// such clients. Default none: the broker's <c>no_auth_user</c>, if any.
    /// </summary>
    public string? NoAuthUser { get; set; }

    /// <summary>
    /// How long a QoS 1 or 2 message delivered to a client may stay unacknowledged before it is sent again
    /// [<c>ack_wait</c>]. Default 30 seconds, as nats-server.
    /// </summary>
    public TimeSpan AckWait { get; set; } = TimeSpan.FromSeconds(30);

    /// <summary>
    /// QoS 1 and 2 messages each subscription's consumer may have unacknowledged [<c>max_ack_pending</c>, or its
    /// nats-server aliases <c>max_pending</c> and <c>max_inflight</c>]. Default 1024, which 0 also gives, as in
    /// nats-server; at most 65,535.
    /// </summary>
    public int MaxAckPending { get; set; } = 1024;

    /// <summary>
    /// Keep the state of the subscriptions' JetStream consumers (delivered and acknowledged sequences) in memory only
    /// [<c>consumer_memory_storage</c>]: the consumers are created with <c>mem_storage: true</c>, as nats-server does, so
    /// a restart of the broker forgets what they delivered. Default <see langword="false"/>.
    /// </summary>
    public bool ConsumerMemoryStorage { get; set; }

    /// <summary>
    /// How long a subscription's durable JetStream consumer may go without its client before JetStream deletes it
    /// [<c>consumer_inactive_threshold</c>, or nats-server's alias <c>consumer_auto_cleanup</c>]: the consumers are
    /// created with that <c>inactive_threshold</c>, as nats-server does. A session that comes back after that gets a
    /// new consumer, which starts with new messages. Default none: the consumers stay until their session ends.
    /// </summary>
    public TimeSpan? ConsumerInactiveThreshold { get; set; }

    /// <summary>
    /// The JetStream domain that keeps the MQTT state [<c>js_domain</c>]: the adapter's JetStream API requests go to
    /// <c>$JS.&lt;domain&gt;.API.</c> instead of <c>$JS.API.</c>, and the adapter uses JetStream even when this broker does
    /// not run it (nats-server's use: the state in a hub's JetStream behind a leaf node). Default none: the local
    /// <c>$JS.API.</c>.
    /// </summary>
    public string? JetStreamDomain { get; set; }

    /// <summary>
    /// How long each of the adapter's JetStream API requests waits for its answer [<c>js_api_timeout</c>, or its
    /// nats-server alias <c>api_timeout</c>; nats-server 2.11.3 and later]. Default 4 seconds, nats-server 2.9's and
    /// 2.10's fixed <c>mqttJSAPITimeout</c> (2.11.3 made it 5 seconds and configurable).
    /// </summary>
    public TimeSpan JetStreamApiTimeout { get; set; } = TimeSpan.FromSeconds(4);

    /// <summary>Refuse QoS 2 publishes, closing the connection [<c>reject_qos2_publish</c>]. Default <see langword="false"/>.</summary>
    public bool RejectQos2Publish { get; set; }

    /// <summary>Grant QoS 1 where a subscription asks for QoS 2 [<c>downgrade_qos2_subscribe</c>]. Default <see langword="false"/>.</summary>
    public bool DowngradeQos2Subscribe { get; set; }

    /// <summary>
    /// The largest packet a client may send, and the Maximum Packet Size told to MQTT 5 clients [<c>max_packet_size</c>,
    /// not in nats-server, which limits the NATS message to <c>max_payload</c>]. Default 1 MiB plus 64 KiB for the
    /// packet's header and properties.
    /// </summary>
    public int MaxPacketSize { get; set; } = (1024 * 1024) + (64 * 1024);

    /// <summary>
    /// QoS 1 and 2 publishes an MQTT 5 client may have unacknowledged towards the broker (the Receive Maximum of
    /// CONNACK) [<c>receive_maximum</c>]. Default 1024.
    /// </summary>
    public int ReceiveMaximum { get; set; } = 1024;

    /// <summary>Topic aliases an MQTT 5 client may set towards the broker [<c>topic_alias_maximum</c>]. Default 64; 0 turns them off.</summary>
    public int TopicAliasMaximum { get; set; } = 64;

    /// <summary>
    /// Keep alive the broker imposes on MQTT 5 clients (CONNACK's Server Keep Alive) [<c>server_keep_alive</c>].
    /// Default none: the client's own keep alive applies.
    /// </summary>
    public TimeSpan? ServerKeepAlive { get; set; }

    /// <summary>
    /// The longest keep alive a client may use [<c>max_keep_alive</c>, ours, Mosquitto's <c>max_keepalive</c>]: an MQTT 5
    /// client asking for more, or for none (0), is told this value as CONNACK's Server Keep Alive and held to it
    /// (MQTT-3.2.2-21); an MQTT 3.1.1 client, which cannot be told, keeps its own, as with Mosquitto 2.0. Not together
    /// with <see cref="ServerKeepAlive"/>. Default none: clients choose.
    /// </summary>
    public TimeSpan? MaxKeepAlive { get; set; }

    /// <summary>Whether <c>tls { }</c> is configured: the listener then uses the TLS plugin's middleware with it.</summary>
    public bool Tls { get; set; }
}
