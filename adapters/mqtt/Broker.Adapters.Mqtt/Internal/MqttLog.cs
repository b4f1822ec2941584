using Microsoft.Extensions.Logging;

namespace Broker.Adapters.Mqtt.Internal;

/// <summary>
/// Log messages of the MQTT plugin (event ids 800-899, docs/logging.md). A client breaking the protocol is logged at debug or warning
/// level, never as an error: errors are reserved for faults of the broker.
/// </summary>
internal static partial class MqttLog
{
    [LoggerMessage(800, LogLevel.Information, "MQTT listener {Listener} on {Host}:{Port}{Tls}")]
    public static partial void Configured(ILogger logger, string listener, string host, int port, string tls);

    [LoggerMessage(801, LogLevel.Debug, "{Client}: client connected (MQTT {Version}, keep alive {KeepAlive}s, clean {Clean})")]
    public static partial void Connected(ILogger logger, string client, string version, int keepAlive, bool clean);

    /// <summary>
    /// <see cref="Connected(ILogger, string, string, int, bool)"/> naming the connection only when the line is written:
    /// the name is formatted from the end point and the client id, which every connect did for a debug line no one
    /// reads (a string, and the formatting code JIT-compiled by the first burst of connects; issue 25, lazy1).
    /// </summary>
    public static void Connected(ILogger logger, Connections.ConnectionStatus status, string version, int keepAlive, bool clean)
    {
        if (logger.IsEnabled(LogLevel.Debug))
        {
            Connected(logger, status.Name, version, keepAlive, clean);
        }
    }

    [LoggerMessage(802, LogLevel.Debug, "{Client}: client closed: {Reason}")]
    public static partial void Closed(ILogger logger, string client, string reason);

    /// <summary>
    /// <see cref="Closed(ILogger, string, string)"/> naming the connection only when the line is written, as
    /// <see cref="Connected(ILogger, Connections.ConnectionStatus, string, int, bool)"/> does: a leave of many sessions
    /// otherwise formats every name, and JIT-compiles that formatting during the leave.
    /// </summary>
    public static void Closed(ILogger logger, Connections.ConnectionStatus status)
    {
        if (logger.IsEnabled(LogLevel.Debug))
        {
            Closed(logger, status.Name, status.Reason ?? "closed");
        }
    }

    [LoggerMessage(803, LogLevel.Warning, "{Client}: protocol violation: {Reason}")]
    public static partial void ProtocolViolation(ILogger logger, string client, string reason);

    [LoggerMessage(804, LogLevel.Warning, "{Client}: CONNECT refused (reason 0x{Code:x2}): {Reason}")]
    public static partial void ConnectRefused(ILogger logger, string client, byte code, string reason);

    [LoggerMessage(805, LogLevel.Warning, "{Client}: replacing the connection of client ID {ClientId}, which connected again")]
    public static partial void TakenOver(ILogger logger, string client, string clientId);

    [LoggerMessage(806, LogLevel.Debug, "{Client}: keep alive of {KeepAlive}s expired")]
    public static partial void KeepAliveExpired(ILogger logger, string client, int keepAlive);

    [LoggerMessage(807, LogLevel.Warning, "{Client}: slow consumer: {Pending} bytes pending, more than the {Limit} allowed")]
    public static partial void SlowConsumer(ILogger logger, string client, long pending, long limit);

    [LoggerMessage(808, LogLevel.Debug, "{Client}: invalid subscription {Filter}: {Reason}")]
    public static partial void SubscriptionRefused(ILogger logger, string client, string filter, string reason);

    [LoggerMessage(809, LogLevel.Debug, "{Client}: message on {Subject} dropped: {Reason}")]
    public static partial void DeliveryDropped(ILogger logger, string client, string subject, string reason);

    [LoggerMessage(810, LogLevel.Warning, "{Client}: connection failed")]
    public static partial void Failed(ILogger logger, string client, Exception exception);

    [LoggerMessage(811, LogLevel.Debug, "{Client}: no CONNECT within {Timeout}")]
    public static partial void ConnectTimeout(ILogger logger, string client, TimeSpan timeout);

    [LoggerMessage(812, LogLevel.Debug, "{Client}: connection from {ClientId} refused: the client ID is flapping")]
    public static partial void Flapping(ILogger logger, string client, string clientId);

    [LoggerMessage(880, LogLevel.Warning, "{Client}: a QoS 1 or 2 message was not stored on JetStream: {Reason}")]
    public static partial void QosStoreFailed(ILogger logger, string client, string reason);

    [LoggerMessage(881, LogLevel.Warning, "{Client}: subscription {Filter} granted QoS 0: its JetStream consumer could not be created: {Reason}")]
    public static partial void ConsumerFailed(ILogger logger, string client, string filter, string reason);

    [LoggerMessage(882, LogLevel.Debug, "MQTT: consumer {Consumer} of an ended session or subscription could not be deleted: {Reason}")]
    public static partial void ConsumerDeleteFailed(ILogger logger, string consumer, string reason);

    // 860-879: state on JetStream (Internal/JetStream, Internal/Sessions).
    [LoggerMessage(860, LogLevel.Information, "MQTT state of account {Account} on its JetStream ({Storage} storage): streams $MQTT_sess, $MQTT_rmsgs, $MQTT_msgs, $MQTT_qos2in ready, {Retained} retained message(s) loaded in {Milliseconds} ms")]
    public static partial void StateOnJetStream(ILogger logger, string account, string storage, int retained, long milliseconds);

    [LoggerMessage(861, LogLevel.Information, "MQTT state in memory for account {Account}: JetStream is not enabled, so sessions and retained messages survive a reconnect, not a restart")]
    public static partial void StateInMemory(ILogger logger, string account);

    [LoggerMessage(862, LogLevel.Warning, "MQTT: still waiting for the JetStream of account {Account} to answer after {Seconds}s: {Reason}")]
    public static partial void WaitingForJetStream(ILogger logger, string account, int seconds, string reason);

    [LoggerMessage(863, LogLevel.Error, "MQTT: the state of account {Account} cannot be kept on its JetStream; sessions and retained messages stay in memory")]
    public static partial void StateSetupFailed(ILogger logger, string account, Exception exception);

    // 871 was "MQTT state in memory: JetStream is not enabled for account $G" until the state was kept per account: not reused.
    [LoggerMessage(872, LogLevel.Warning, "MQTT state of account {Account} retired after a configuration reload ({Reason}): its MQTT clients are closed")]
    public static partial void AccountStateRetired(ILogger logger, string account, string reason);

    [LoggerMessage(864, LogLevel.Warning, "MQTT session store: {Operation} of client ID {ClientId} failed")]
    public static partial void SessionStoreFailed(ILogger logger, string clientId, string operation, Exception exception);

    [LoggerMessage(865, LogLevel.Warning, "MQTT retained message store: {Operation} of {Subject} failed")]
    public static partial void RetainedStoreFailed(ILogger logger, string subject, string operation, Exception exception);

    [LoggerMessage(866, LogLevel.Warning, "MQTT session record {Subject} holds client ID {Stored}, not {ClientId} (hash collision): not resumed")]
    public static partial void SessionHashCollision(ILogger logger, string subject, string stored, string clientId);

    [LoggerMessage(867, LogLevel.Information, "MQTT: the JetStream of account {Account} has no file storage here ({Reason}); its MQTT streams are in memory and do not survive a restart")]
    public static partial void StreamsInMemory(ILogger logger, string account, string reason);

    [LoggerMessage(868, LogLevel.Warning, "MQTT retained message {Subject} read from JetStream is not valid and was skipped: {Reason}")]
    public static partial void RetainedRecordInvalid(ILogger logger, string subject, string reason);

    [LoggerMessage(869, LogLevel.Information, "MQTT: {Count} session(s) of account {Account} expired while the broker was down and were purged from $MQTT_sess")]
    public static partial void ExpiredSessionsPurged(ILogger logger, string account, int count);

    [LoggerMessage(870, LogLevel.Information, "MQTT state in JetStream domain {Domain}: API requests go to {Prefix}* (account {Account})")]
    public static partial void StateInDomain(ILogger logger, string account, string domain, string prefix);

    [LoggerMessage(883, LogLevel.Error, "{Client}: connection failed")]
    public static partial void ConnectionFailed(ILogger logger, string client, Exception exception);

    [LoggerMessage(884, LogLevel.Warning, "MQTT: retained messages still queued after {Timeout} at shutdown are not stored")]
    public static partial void RetainedDrainTimedOut(ILogger logger, TimeSpan timeout);
}
