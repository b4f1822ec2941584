namespace Broker.Core.Internal.Subscriptions;

/// <summary>
/// The subscriptions matching one literal subject: plain ones, and queue subscriptions grouped by queue name.
/// Immutable once published, so readers never lock; changes produce new instances.
/// </summary>
internal sealed class SubListResult
{
    public static readonly SubListResult Empty = new([], []);

    public SubListResult(Subscription[] plain, QueueGroup[] queues)
    {
        Plain = plain;
        Queues = queues;
        HasLink = Array.Exists(plain, IsLink) || Array.Exists(queues, static q => q.HasLink);
    }

    /// <summary>
    /// Whether a subscription of a leaf node link or a route is among them: deliveries then go through
    /// <see cref="Leaf.LeafFanout"/>, which sends one message per link. Computed once per result.
    /// </summary>
    public bool HasLink { get; }

    internal static bool IsLink(Subscription subscription) => Clients.LinkClient.IsLink(subscription.Client.Kind);

    public Subscription[] Plain { get; }

    public QueueGroup[] Queues { get; }

    public bool IsEmpty => Plain.Length == 0 && Queues.Length == 0;
}

/// <summary>The members of one queue group that match a subject.</summary>
internal sealed class QueueGroup
{
    public QueueGroup(byte[] name, Subscription[] members)
    {
        Name = name;
        Members = members;
        HasLink = Array.Exists(members, SubListResult.IsLink);
    }

    /// <summary>Whether a member is a link's (a route's or leaf node link's), whose queue weight counts in a pick.</summary>
    public bool HasLink { get; }

    public byte[] Name { get; }

    public Subscription[] Members { get; }
}
