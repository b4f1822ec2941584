using Broker.Abstractions;

namespace Broker.Core.Internal.Accounts;

/// <summary>
/// A requesting account's routes back by the reply they deliver to (nats-server's <c>imports.rrMap</c>): when a
/// subscription of the account goes away (UNSUB, or its client closes) and nothing in the account is interested in such
/// a reply any more, the routes waiting to deliver there are removed from their exporters at once (accounts.go
/// <c>checkForReverseEntries</c>) instead of at their response threshold, and a sampled request reports 408. Keyed by
/// the route's own reply bytes (no copy); the value is the route, or a list in the rare case of several routes to one
/// reply. A subscription removed while no route waits costs one volatile read.
/// </summary>
internal sealed class ReverseRoutes
{
    private readonly Lock sync = new();
    private readonly Dictionary<byte[], object> byReply = new(ByteArrayComparer.Instance);
    private readonly Dictionary<byte[], object>.AlternateLookup<ReadOnlySpan<byte>> lookup;
    private readonly Account account;
    private volatile int count;

    public ReverseRoutes(Account account)
    {
        this.account = account;
        lookup = byReply.GetAlternateLookup<ReadOnlySpan<byte>>();
    }

    /// <summary>Replies with routes waiting (nats-server's <c>NumPendingReverseResponses</c>).</summary>
    public int Count => count;

    /// <summary>Records a route back to this account (it lives in its export's owner's <see cref="Account.Responses"/>).</summary>
    public void Add(ServiceImport route)
    {
        lock (sync)
        {
            if (!byReply.TryGetValue(route.ToBytes, out var existing))
            {
                byReply.Add(route.ToBytes, route);
                count = byReply.Count;
            }
            else if (existing is List<ServiceImport> several)
            {
                several.Add(route);
            }
            else
            {
                byReply[route.ToBytes] = new List<ServiceImport> { (ServiceImport)existing, route };
            }
        }
    }

    /// <summary>Forgets a route that went (its response passed, or it expired).</summary>
    public void Remove(ServiceImport route)
    {
        if (count == 0)
        {
            return;
        }

        lock (sync)
        {
            if (!byReply.TryGetValue(route.ToBytes, out var existing))
            {
                return;
            }

            if (ReferenceEquals(existing, route) || (existing is List<ServiceImport> several && several.Remove(route) && several.Count == 0))
            {
                byReply.Remove(route.ToBytes);
                count = byReply.Count;
            }
        }
    }

    /// <summary>
    /// A subscription on <paramref name="subject"/> of this account went away: the routes to replies it covered that
    /// nobody in the account is interested in any more are removed from their exporters (a sampled one reports 408).
    /// </summary>
    public void SubscriptionRemoved(byte[] subject)
    {
        if (count == 0)
        {
            return;
        }

        List<byte[]>? replies = null;
        lock (sync)
        {
            if (!Subjects.HasWildcard(subject))
            {
                if (lookup.ContainsKey(subject))
                {
                    replies = [subject];
                }
            }
            else
            {
                foreach (var reply in byReply.Keys)
                {
                    if (Subjects.IsSubsetOf(reply, subject))
                    {
                        (replies ??= []).Add(reply);
                    }
                }
            }
        }

        foreach (var reply in replies ?? [])
        {
            if (!account.SubList.Match(reply).IsEmpty)
            {
                continue;
            }

            object? routes;
            lock (sync)
            {
                if (!lookup.Remove(reply, out _, out routes))
                {
                    continue;
                }

                count = byReply.Count;
            }

            if (routes is List<ServiceImport> several)
            {
                foreach (var route in several)
                {
                    Lost(route);
                }
            }
            else
            {
                Lost((ServiceImport)routes);
            }
        }
    }

    private static void Lost(ServiceImport route) => route.Export?.Owner.Responses.Remove(route, RouteFailure.InterestLost, forget: false);
}
