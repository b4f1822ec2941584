using System.Collections.Concurrent;
using System.Text;

namespace Broker.Adapters.Mqtt.Internal.Sessions;

/// <summary>A retained message: the last message published with RETAIN on its topic.</summary>
/// <param name="Subject">The NATS subject (the key: one retained message per subject).</param>
/// <param name="Topic">The MQTT topic.</param>
/// <param name="Qos">The QoS it was published with.</param>
/// <param name="Payload">The payload (never empty: an empty one deletes).</param>
/// <param name="Properties">The MQTT 5 property block it was published with, or empty.</param>
internal sealed record RetainedMessage(string Subject, string Topic, byte Qos, byte[] Payload, byte[] Properties);

/// <summary>Where retained messages are kept between restarts (JetStream's <c>$MQTT_rmsgs</c> in nats-server).</summary>
internal interface IRetainedStore
{
    /// <summary>Every stored retained message, read once at start.</summary>
    IReadOnlyList<RetainedMessage> LoadAll();

    /// <summary>Stores or replaces the message of its subject.</summary>
    void Save(RetainedMessage message);

    /// <summary>Removes the message of a subject.</summary>
    void Delete(string subject);
}

/// <summary>Retained messages live only in memory: the store keeps nothing.</summary>
internal sealed class MemoryRetainedStore : IRetainedStore
{
    public IReadOnlyList<RetainedMessage> LoadAll() => [];

    public void Save(RetainedMessage message)
    {
    }

    public void Delete(string subject)
    {
    }
}

/// <summary>
/// The retained messages by subject, as nats-server keeps them in memory beside <c>$MQTT_rmsgs</c>: set, replaced and
/// cleared (an empty payload, MQTT-3.3.1-10) on publish; looked up by topic filter when a subscription starts.
/// </summary>
internal sealed class RetainedMessages
{
    private readonly ConcurrentDictionary<string, RetainedMessage> messages = new(StringComparer.Ordinal);
    private readonly IRetainedStore store;

    public RetainedMessages(IRetainedStore store)
    {
        this.store = store;
        foreach (var message in store.LoadAll())
        {
            messages[message.Subject] = message;
        }
    }

    public int Count => messages.Count;

    public void Set(ReadOnlySpan<byte> subject, ReadOnlySpan<byte> topic, byte qos, ReadOnlySpan<byte> payload, ReadOnlySpan<byte> properties)
    {
        var key = Encoding.UTF8.GetString(subject);
        if (payload.IsEmpty)
        {
            if (messages.TryRemove(key, out _))
            {
                store.Delete(key);
            }

            return;
        }

        var message = new RetainedMessage(key, Encoding.UTF8.GetString(topic), qos, payload.ToArray(), properties.ToArray());
        messages[key] = message;
        store.Save(message);
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
