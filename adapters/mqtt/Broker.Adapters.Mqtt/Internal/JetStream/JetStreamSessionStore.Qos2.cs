using System.Collections.Concurrent;
using System.Globalization;

namespace Broker.Adapters.Mqtt.Internal.JetStream;

/// <summary>
/// The packet identifiers of incoming QoS 2 publishes awaiting PUBREL, in <c>$MQTT_qos2in</c> as nats-server names it:
/// one empty message on <c>$MQTT.qos2.in.&lt;hash of the client id&gt;.&lt;packet id&gt;</c> from before PUBREC until
/// PUBREL. nats-server stores the message itself there and delivers it on PUBREL (the specification's method A); the
/// adapter delivers on PUBLISH (method B) and needs only the identifier, to recognise a resend after a restart.
/// </summary>
/// <remarks>
/// Each identifier is its own subject, so recording one is a publish that does not wait for other identifiers or for
/// the session record (whose JSON grows with the subscriptions): the file store's group commit shares one fsync among
/// the publishes of a burst. The record is removed by its sequence, kept from the publish's answer: a purge by subject
/// looks through the whole stream (0.3 ms each with a thousand identifiers waiting, against 0.02 ms for a delete).
/// Identifiers read back after a restart have no known sequence and are purged by subject, once.
/// </remarks>
internal sealed partial class JetStreamSessionStore
{
    // The stream sequence of each recorded identifier's message, by subject.
    private readonly ConcurrentDictionary<string, ulong> awaiting = new(StringComparer.Ordinal);

    public async Task AwaitReleaseAsync(string clientId, ushort packetId)
    {
        var subject = Qos2InSubject(clientId, packetId);
        awaiting[subject] = await api.PublishAsync(subject, default, default, CancellationToken.None).ConfigureAwait(false);
    }

    public async Task ReleaseAsync(string clientId, ushort packetId)
    {
        var subject = Qos2InSubject(clientId, packetId);
        if (!awaiting.TryRemove(subject, out var sequence)
            || !await api.DeleteMessageAsync(MqttStreams.Qos2InStream, sequence, CancellationToken.None).ConfigureAwait(false))
        {
            // Read back after a restart, or replaced meanwhile: look it up by subject.
            await api.PurgeSubjectAsync(MqttStreams.Qos2InStream, subject, CancellationToken.None).ConfigureAwait(false);
        }
    }

    public async ValueTask<IReadOnlyCollection<ushort>> LoadAwaitingReleaseAsync(string clientId, CancellationToken cancellationToken)
    {
        var prefix = Qos2InPrefix(clientId);
        var subjects = await api.ListSubjectsAsync(MqttStreams.Qos2InStream, prefix + "*", cancellationToken).ConfigureAwait(false);
        var ids = new List<ushort>(subjects.Count);
        foreach (var subject in subjects)
        {
            if (ushort.TryParse(subject.AsSpan(prefix.Length), NumberStyles.None, CultureInfo.InvariantCulture, out var packetId) && packetId != 0)
            {
                ids.Add(packetId);
            }
        }

        return ids;
    }

    /// <summary>Forgets every identifier of a session (the session is dropped).</summary>
    private async Task PurgeAwaitingReleaseAsync(string clientId, CancellationToken cancellationToken)
    {
        var prefix = Qos2InPrefix(clientId);
        foreach (var subject in awaiting.Keys)
        {
            if (subject.StartsWith(prefix, StringComparison.Ordinal))
            {
                awaiting.TryRemove(subject, out _);
            }
        }

        await api.PurgeSubjectAsync(MqttStreams.Qos2InStream, prefix + "*", cancellationToken).ConfigureAwait(false);
    }

    private static string Qos2InPrefix(string clientId) => MqttStreams.Qos2InSubjectPrefix + Hash(clientId) + ".";

    private static string Qos2InSubject(string clientId, ushort packetId)
        => Qos2InPrefix(clientId) + packetId.ToString(CultureInfo.InvariantCulture);
}
