using Broker.Abstractions;
using Broker.JetStream.Internal.Consumers;

namespace Broker.JetStream.Internal.Streams;

/// <summary>
/// The stream's consumers: the registry, telling them about new messages, and retention (interest and work-queue
/// streams remove a message once the consumers that need it have acknowledged it; nats-server <c>ackMsg</c>).
/// </summary>
internal sealed partial class MessageStream
{
    private readonly Lock consumersGate = new();
    private readonly Dictionary<string, Consumer> consumers = new(StringComparer.Ordinal);

    // Copy-on-write list read by the publish path without a lock.
    private Consumer[] consumerList = [];

    public Consumer[] ConsumersSnapshot => Volatile.Read(ref consumerList);

    public int ConsumerCount => ConsumersSnapshot.Length;

    public Consumer? FindConsumer(string name)
    {
        lock (consumersGate)
        {
            return consumers.GetValueOrDefault(name);
        }
    }

    public List<Consumer> ConsumersByName()
    {
        lock (consumersGate)
        {
            return [.. consumers.Values.OrderBy(c => c.Name, StringComparer.Ordinal)];
        }
    }

    public void AddConsumer(Consumer consumer)
    {
        lock (consumersGate)
        {
            consumers[consumer.Name] = consumer;
            Volatile.Write(ref consumerList, [.. consumers.Values]);
        }
    }

    public void RemoveConsumer(Consumer consumer)
    {
        lock (consumersGate)
        {
            if (consumers.TryGetValue(consumer.Name, out var existing) && ReferenceEquals(existing, consumer))
            {
                consumers.Remove(consumer.Name);
                Volatile.Write(ref consumerList, [.. consumers.Values]);
            }
        }
    }

    /// <summary>Tells the consumers whose filter matches that a message was stored.</summary>
    private void NotifyConsumers(ReadOnlySpan<byte> subject, ulong sequence)
    {
        foreach (var consumer in ConsumersSnapshot)
        {
            if (consumer.Matches(subject))
            {
                consumer.OnNewMessage(sequence);
            }
        }
    }

    /// <summary>Whether a consumer of an interest stream would deliver a message on <paramref name="subject"/>.</summary>
    private bool HasInterestIn(ReadOnlySpan<byte> subject)
    {
        foreach (var consumer in ConsumersSnapshot)
        {
            if (consumer.Matches(subject))
            {
                return true;
            }
        }

        return false;
    }

    /// <summary>
    /// A consumer acknowledged <paramref name="sequence"/>: on a work-queue stream the message goes; on an interest
    /// stream it goes once no other consumer still needs it (nats-server <c>ackMsg</c>, <c>checkInterest</c>).
    /// </summary>
    public void OnAcknowledged(Consumer by, ulong sequence)
    {
        var retention = Config.Retention;
        if (retention == RetentionPolicy.Limits)
        {
            return;
        }

        if (retention == RetentionPolicy.Interest)
        {
            var others = ConsumersSnapshot;
            if (others.Length > 1)
            {
                var message = new StoredMessage();
                if (Store.Load(sequence, message) != LoadStatus.Found)
                {
                    return;
                }

                foreach (var other in others)
                {
                    if (!ReferenceEquals(other, by) && other.NeedsAck(sequence, message.Subject.Span))
                    {
                        return;
                    }
                }
            }
        }

        Store.Remove(sequence);
    }
}
