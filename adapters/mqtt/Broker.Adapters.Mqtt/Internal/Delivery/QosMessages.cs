using System.Buffers;
using System.Security.Cryptography;
using System.Text;
using Broker.Abstractions;
using Broker.Adapters.Mqtt.Internal.JetStream;
using Broker.Adapters.Mqtt.Internal.Sessions;
using Microsoft.Extensions.Logging;

namespace Broker.Adapters.Mqtt.Internal.Delivery;

/// <summary>
/// QoS 1 and 2 messages on JetStream, as nats-server keeps them: an MQTT publish at QoS 1 or 2 is also stored on
/// <c>$MQTT.msgs.&lt;subject&gt;</c> in the interest-retention stream <c>$MQTT_msgs</c>, and every QoS 1 or 2
/// subscription has a durable push consumer on it that delivers to <c>$MQTT.sub.&lt;id&gt;</c> and waits for the
/// client's acknowledgement, redelivering after <c>ack_wait</c>. Deliveries and acknowledgements go through the
/// adapter's internal bus client, so a user needs no permission on the internal subjects (the subscription's own
/// subject is checked when the subscription starts, as for QoS 0).
/// </summary>
internal sealed class QosMessages
{
    /// <summary>The stream (<see cref="MqttStreams"/>).</summary>
    public const string Stream = MqttStreams.MessageStream;

    /// <summary>The stream's subjects are this prefix and the message's NATS subject.</summary>
    public const string SubjectPrefix = MqttStreams.MessageSubjectPrefix;

    /// <summary><see cref="SubjectPrefix"/> as bytes, to recognise a delivery's subject without allocating.</summary>
    public static ReadOnlySpan<byte> SubjectPrefixBytes => "$MQTT.msgs."u8;

    /// <summary>The prefix of consumers' deliver subjects.</summary>
    public const string DeliverPrefix = "$MQTT.sub.";

    private static readonly ReadOnlySequence<byte> AckPayload = new("+ACK"u8.ToArray());

    private readonly JetStreamClient api;
    private readonly IBusClient client;
    private readonly MqttOptions options;

    public QosMessages(JetStreamClient api, IBusClient client, MqttOptions options)
    {
        this.api = api;
        this.client = client;
        this.options = options;
    }

    /// <summary>
    /// Stores a QoS 1 or 2 message; the task completes when JetStream has it (on disk with the file store), which is
    /// when the publisher is acknowledged. The memory given is copied before this returns.
    /// </summary>
    public Task<ulong> StoreAsync(ReadOnlySpan<byte> subject, ReadOnlyMemory<byte> headers, ReadOnlyMemory<byte> payload)
    {
        var stored = string.Create(SubjectPrefix.Length + Encoding.UTF8.GetCharCount(subject), subject.ToArray(), static (chars, bytes) =>
        {
            SubjectPrefix.AsSpan().CopyTo(chars);
            Encoding.UTF8.GetChars(bytes, chars[SubjectPrefix.Length..]);
        });
        return api.PublishAsync(stored, headers, payload, CancellationToken.None);
    }

    /// <summary>
    /// Creates (or keeps) the durable consumer of a QoS 1 or 2 subscription on the NATS subjects its filter maps to
    /// (two for <c>a/#</c>: <c>a.&gt;</c> and <c>a</c>). New messages only, as an MQTT subscription starts. With
    /// <c>consumer_memory_storage</c> and <c>consumer_inactive_threshold</c> as nats-server applies them; a resumed
    /// session whose consumer JetStream deleted for inactivity gets it created again here. A shared subscription's
    /// consumer (<paramref name="deliverGroup"/>, its group) is one for all members, with the same config whoever
    /// creates it: <c>max_ack_pending</c> is the configured one, each member's receive maximum limits its own deliveries.
    /// </summary>
    public Task EnsureConsumerAsync(string name, IReadOnlyList<string> subjects, string deliverSubject, int receiveMaximum, string? deliverGroup, CancellationToken cancellationToken)
    {
        var filters = subjects.Select(subject => SubjectPrefix + subject).ToArray();
        var maxAckPending = deliverGroup is null ? Math.Min(options.MaxAckPending, receiveMaximum) : options.MaxAckPending;
        return api.CreateConsumerAsync(
            Stream,
            new ConsumerSpec(name, filters[0], deliverSubject, options.AckWait, maxAckPending, ConsumerDeliverPolicy.New, filters.Length > 1 ? filters[1..] : null)
            {
                MemoryStorage = options.ConsumerMemoryStorage,
                InactiveThreshold = deliverGroup is null ? options.ConsumerInactiveThreshold : null,
                DeliverGroup = deliverGroup,
            },
            cancellationToken);
    }

    public Task DeleteConsumerAsync(string name) => api.DeleteConsumerAsync(Stream, name, CancellationToken.None);

    /// <summary>Deletes the consumers of subscriptions that ended; a failure is logged (the consumer then waits for an operator).</summary>
    public async Task DeleteConsumersAsync(IEnumerable<SubscriptionRecord> subscriptions, ILogger logger)
    {
        foreach (var subscription in subscriptions)
        {
            if (subscription.Consumer is not { } consumer)
            {
                continue;
            }

            try
            {
                if (!await api.TryDeleteConsumerAsync(Stream, consumer).ConfigureAwait(false))
                {
                    MqttLog.ConsumerDeleteFailed(logger, consumer, api.NoAnswer);
                }
            }
            catch (Exception ex) when (ex is JetStreamApiException or ObjectDisposedException)
            {
                MqttLog.ConsumerDeleteFailed(logger, consumer, ex.Message);
            }
        }
    }

    /// <summary>Receives a consumer's deliveries (a shared subscription's member: in its group, which shares them).</summary>
    public IBusSubscription Subscribe(string deliverSubject, string? queueGroup, BusMessageHandler handler) => client.Subscribe(deliverSubject, queueGroup, handler);

    /// <summary>Acknowledges a delivery: the client sent PUBACK, or PUBREC for QoS 2.</summary>
    public void Ack(string ackSubject) => client.Publish(Encoding.UTF8.GetBytes(ackSubject), default, default, AckPayload);

    /// <summary>A stored message by its sequence (a delivery still unacknowledged is still there), or <see langword="null"/>.</summary>
    public Task<FetchedMessage?> LoadAsync(ulong sequence) => api.GetBySequenceAsync(Stream, sequence, CancellationToken.None);

    /// <summary>
    /// Hands a delivery back for redelivery after <paramref name="delay"/>: the client could not take it (receive
    /// maximum) or its connection closed before acknowledging.
    /// </summary>
    public void Nak(string ackSubject, TimeSpan delay)
    {
        var body = delay <= TimeSpan.Zero ? "-NAK"u8.ToArray() : Encoding.UTF8.GetBytes($"-NAK {{\"delay\":{delay.Ticks * 100}}}");
        client.Publish(Encoding.UTF8.GetBytes(ackSubject), default, default, new ReadOnlySequence<byte>(body));
    }

    /// <summary>
    /// The consumer name and deliver subject of a shared subscription (<c>$share/&lt;group&gt;/&lt;filter&gt;</c>): one
    /// per group and filter in the account, whichever member makes it.
    /// </summary>
    public static (string Consumer, string DeliverSubject) SharedConsumer(string shareFilter)
    {
        var hash = Convert.ToHexStringLower(SHA256.HashData(Encoding.UTF8.GetBytes(shareFilter)).AsSpan(0, 10));
        return (SharedPrefix + hash, DeliverPrefix + "share." + hash);
    }

    /// <summary>Whether a consumer is a shared subscription's (<see cref="SharedConsumer"/>), which outlives a member.</summary>
    public static bool IsShared(string consumer) => consumer.StartsWith(SharedPrefix, StringComparison.Ordinal);

    private const string SharedPrefix = "share_";

    /// <summary>A new consumer name and deliver subject for a subscription of a session (nats-server: session hash and a nuid).</summary>
    public static (string Consumer, string DeliverSubject) NewConsumer(string clientId)
    {
        var hash = Convert.ToHexStringLower(SHA256.HashData(Encoding.UTF8.GetBytes(clientId)).AsSpan(0, 8));
        var id = Convert.ToHexStringLower(RandomNumberGenerator.GetBytes(10));
        return ($"{hash}_{id}", DeliverPrefix + id);
    }
}
