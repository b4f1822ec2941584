namespace Broker.Abstractions;

/// <summary>A subscription of an in-process client. Disposing it unsubscribes.</summary>
public interface IBusSubscription : IDisposable
{
    /// <summary>The subscribed subject.</summary>
    string Subject { get; }

    /// <summary>The queue group, or <see langword="null"/>.</summary>
    string? QueueGroup { get; }

    /// <summary>Messages delivered so far.</summary>
    long Delivered { get; }

    /// <summary>
    /// Unsubscribes automatically once <paramref name="maxMessages"/> messages in total have been delivered
    /// (NATS <c>UNSUB sid max</c>); at once when that many were delivered already.
    /// </summary>
    /// <param name="maxMessages">The total number of messages to deliver.</param>
    void AutoUnsubscribe(long maxMessages);
}
