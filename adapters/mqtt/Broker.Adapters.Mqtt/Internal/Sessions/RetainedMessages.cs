using System.Collections.Concurrent;
using System.Text;

namespace Broker.Adapters.Mqtt.Internal.Sessions;

/// <summary>A retained message: the last message published with RETAIN on its topic.</summary>
/// <param name="Subject">The NATS subject (the key: one retained message per subject).</param>
/// <param name="Topic">The MQTT topic.</param>
/// <param name="Qos">The QoS it was published with.</param>
/// <param name="Payload">The payload (never empty: an empty one deletes).</param>
/// <param name="Properties">The MQTT 5 property block it was published with, or empty.</param>
internal sealed record RetainedMessage(string Subject, string Topic, byte Qos, byte[] Payload, byte[] Properties)
{
    /// <summary>
    /// When it was set, in milliseconds since the Unix epoch (read back from the store's timestamp after a restart), so
    /// its message expiry interval counts from then; 0 when not known, then it never expires.
    /// </summary>
    public long SetAt { get; init; }
}

/// <summary>
/// Where retained messages are kept between restarts (JetStream's <c>$MQTT_rmsgs</c>, as in nats-server). Writes are
/// called on the publish path and must not make it wait: a store queues them and applies them in order.
/// </summary>
internal interface IRetainedStore
{
    /// <summary>Every stored retained message, read once at start.</summary>
    Task<IReadOnlyList<RetainedMessage>> LoadAllAsync(CancellationToken cancellationToken);

    /// <summary>Queues storing (replacing) the message of its subject; returns at once.</summary>
    void Save(RetainedMessage message);

    /// <summary>Queues removing the message of a subject; returns at once.</summary>
    void Delete(string subject);

    /// <summary>Completes when the writes queued so far are applied (or failed and logged).</summary>
    Task FlushAsync();
}

/// <summary>Retained messages live only in memory: the store keeps nothing.</summary>
internal sealed class MemoryRetainedStore : IRetainedStore
{
    public Task<IReadOnlyList<RetainedMessage>> LoadAllAsync(CancellationToken cancellationToken) => Task.FromResult<IReadOnlyList<RetainedMessage>>([]);

    public void Save(RetainedMessage message)
    {
    }

    public void Delete(string subject)
    {
    }

    public Task FlushAsync() => Task.CompletedTask;
}

/// <summary>
/// The retained messages by subject, as nats-server keeps them in memory beside <c>$MQTT_rmsgs</c>: set, replaced and
/// cleared (an empty payload, MQTT-3.3.1-10) on publish; looked up by topic filter when a subscription starts.
/// </summary>
internal sealed class RetainedMessages
{
    private readonly ConcurrentDictionary<string, RetainedMessage> messages = new(StringComparer.Ordinal);
    private readonly Lock writeGate = new();
    private IRetainedStore store;

    public RetainedMessages(IRetainedStore store)
    {
        this.store = store;
    }

    /// <summary>Where the messages are kept.</summary>
    public IRetainedStore Store => store;

    /// <summary>
    /// Waits, at most <paramref name="timeout"/>, until the writes queued so far are applied to the store: a closing
    /// connection's retained publishes and will. A stopping broker waits for its connections before it stops JetStream,
    /// so writes queued in the last moments are not lost with the queue.
    /// </summary>
    public async Task FlushQueuedAsync(TimeSpan timeout)
    {
        try
        {
            await store.FlushAsync().WaitAsync(timeout).ConfigureAwait(false);
        }
        catch (TimeoutException)
        {
            // The store is slow or gone: the writes stay queued, as they would without the wait.
        }
    }

    /// <summary>
    /// Switches to <paramref name="source"/> and loads its messages. Called once at start, before any client is
    /// attached (<see cref="Accounts.MqttAccount.Ready"/>), so no publish races it.
    /// </summary>
    public async Task LoadAsync(IRetainedStore source, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(source);
        foreach (var message in await source.LoadAllAsync(cancellationToken).ConfigureAwait(false))
        {
            messages[message.Subject] = message;
        }

        store = source;
    }

    public int Count => messages.Count;

    public void Set(ReadOnlySpan<byte> subject, ReadOnlySpan<byte> topic, byte qos, ReadOnlySpan<byte> payload, ReadOnlySpan<byte> properties)
    {
        var key = Encoding.UTF8.GetString(subject);
        if (payload.IsEmpty)
        {
            lock (writeGate)
            {
                if (messages.TryRemove(key, out _))
                {
                    store.Delete(key);
                }
            }

            return;
        }

        var message = new RetainedMessage(key, Encoding.UTF8.GetString(topic), qos, payload.ToArray(), properties.ToArray()) { SetAt = DateTimeOffset.UtcNow.ToUnixTimeMilliseconds() };

        // Two publishers of one topic: the store must end with the message memory ends with, so both change in one
        // step (retained publishes are rare; the store only queues).
        lock (writeGate)
        {
            messages[key] = message;
            store.Save(message);
        }
    }

    /// <summary>
    /// Discards a retained message whose message expiry interval passed (MQTT 5 section 3.3.2.3.3: the topic has no
    /// retained message then), unless a newer one replaced it meanwhile.
    /// </summary>
    public void RemoveExpired(RetainedMessage message)
    {
        ArgumentNullException.ThrowIfNull(message);
        lock (writeGate)
        {
            if (messages.TryRemove(new KeyValuePair<string, RetainedMessage>(message.Subject, message)))
            {
                store.Delete(message.Subject);
            }
        }
    }

    /// <summary>The retained messages whose topic matches an MQTT topic filter.</summary>
    public List<RetainedMessage> Match(string filter)
    {
        var result = new List<RetainedMessage>();
        foreach (var message in messages.Values)
        {
            if (Topics.TopicFilter.Matches(filter, message.Topic))
            {
                result.Add(message);
            }
        }

        return result;
    }
}
