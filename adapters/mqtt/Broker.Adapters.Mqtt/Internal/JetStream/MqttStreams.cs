namespace Broker.Adapters.Mqtt.Internal.JetStream;

/// <summary>
/// The adapter's streams, named as nats-server names them (<c>server/mqtt.go</c>), so operators find them where they
/// know them: <c>$MQTT_sess</c> (one session record per client id), <c>$MQTT_rmsgs</c> (one retained message per
/// subject), <c>$MQTT_msgs</c> (QoS 1 and 2 messages, delivered through one durable consumer per subscription) and
/// <c>$MQTT_qos2in</c> (one message per incoming QoS 2 publish of a persistent session awaiting its PUBREL, which
/// delivers it).
/// </summary>
internal static class MqttStreams
{
    public const string SessionStream = "$MQTT_sess";
    public const string SessionSubjectPrefix = "$MQTT.sess.";
    public const string RetainedStream = "$MQTT_rmsgs";
    public const string RetainedSubjectPrefix = "$MQTT.rmsgs.";
    public const string MessageStream = "$MQTT_msgs";
    public const string MessageSubjectPrefix = "$MQTT.msgs.";
    public const string Qos2InStream = "$MQTT_qos2in";
    public const string Qos2InSubjectPrefix = "$MQTT.qos2.in.";

    /// <summary>The specs on a storage.</summary>
    public static StreamSpec[] Specs(StreamStorage storage) =>
    [
        new(SessionStream, [SessionSubjectPrefix + ">"], StreamRetention.Limits, 1, storage),
        new(RetainedStream, [RetainedSubjectPrefix + ">"], StreamRetention.Limits, 1, storage),
        new(MessageStream, [MessageSubjectPrefix + ">"], StreamRetention.Interest, -1, storage),
        new(Qos2InStream, [Qos2InSubjectPrefix + ">"], StreamRetention.Limits, 1, storage),
    ];

    /// <summary>
    /// Creates the streams (or accepts and updates existing ones) on file storage when JetStream can store files,
    /// memory otherwise: the account allows no file storage (<c>max_storage</c> 0), or no file store is loaded (the
    /// engine refuses the storage type with <c>JSStreamCreateErrF</c>).
    /// </summary>
    /// <returns>The storage the streams were created on, and why it is memory when it is.</returns>
    public static async Task<(StreamStorage Storage, string? MemoryReason)> EnsureAsync(JetStreamClient api, CancellationToken cancellationToken)
    {
        var limits = await api.AccountLimitsAsync(cancellationToken).ConfigureAwait(false);
        if (limits.MaxStorage == 0)
        {
            await EnsureAllAsync(api, StreamStorage.Memory, cancellationToken).ConfigureAwait(false);
            return (StreamStorage.Memory, "the account's max_storage is 0");
        }

        try
        {
            await EnsureAllAsync(api, StreamStorage.File, cancellationToken).ConfigureAwait(false);
            return (StreamStorage.File, null);
        }
        catch (JetStreamApiException ex) when (ex.ErrorCode == JetStreamApiException.StreamCreate)
        {
            await EnsureAllAsync(api, StreamStorage.Memory, cancellationToken).ConfigureAwait(false);
            return (StreamStorage.Memory, ex.Description);
        }
    }

    private static async Task EnsureAllAsync(JetStreamClient api, StreamStorage storage, CancellationToken cancellationToken)
    {
        foreach (var spec in Specs(storage))
        {
            await api.EnsureStreamAsync(spec, cancellationToken).ConfigureAwait(false);
        }
    }
}
