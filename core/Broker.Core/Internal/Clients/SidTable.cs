using Broker.Core.Internal.Subscriptions;

namespace Broker.Core.Internal.Clients;

/// <summary>
/// A client's subscriptions by sid. Most clients hold one subscription (an MQTT session with one filter, a service,
/// a request's inbox), so the first is kept in a field and a dictionary is made only from the second on: a dictionary
/// with one entry cost every such connection about 210 B (issue 25). Not synchronised: the owner's lock guards it.
/// A mutable struct, held in a field and never copied.
/// </summary>
internal struct SidTable
{
    // The only subscription while many is null; unused once many exists.
    private Subscription? single;
    private Dictionary<string, Subscription>? many;

    public readonly int Count => many?.Count ?? (single is null ? 0 : 1);

    public readonly bool TryGetValue(string sid, out Subscription subscription)
    {
        if (many is not null)
        {
            return many.TryGetValue(sid, out subscription!);
        }

        if (single is not null && string.Equals(single.SidString, sid, StringComparison.Ordinal))
        {
            subscription = single;
            return true;
        }

        subscription = null!;
        return false;
    }

    public readonly bool ContainsKey(string sid) => TryGetValue(sid, out _);

    /// <summary>Adds a subscription whose sid is not in the table yet.</summary>
    public void Add(Subscription subscription)
    {
        if (many is null && single is null)
        {
            single = subscription;
            return;
        }

        if (many is null)
        {
            many = new Dictionary<string, Subscription>(StringComparer.Ordinal) { [single!.SidString] = single };
            single = null;
        }

        many.Add(subscription.SidString, subscription);
    }

    /// <summary>Removes the entry of <paramref name="sid"/>, if any.</summary>
    public void Remove(string sid)
    {
        if (many is not null)
        {
            many.Remove(sid);
        }
        else if (single is not null && string.Equals(single.SidString, sid, StringComparison.Ordinal))
        {
            single = null;
        }
    }

    /// <summary>How many entries the table holds without growing: the dictionary's capacity, once there is one.</summary>
    public readonly int Capacity => many?.Capacity ?? 1;

    /// <summary>Shrinks the dictionary, once there is one, to hold <paramref name="capacity"/> entries without growing.</summary>
    public readonly void TrimExcess(int capacity) => many?.TrimExcess(Math.Max(capacity, many.Count));

    public void Clear()
    {
        single = null;
        many = null;
    }

    /// <summary>The subscriptions, copied.</summary>
    public readonly Subscription[] ToArray() =>
        many is not null ? [.. many.Values] : single is not null ? [single] : [];
}
