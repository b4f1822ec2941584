using System.Text;
using Broker.Core.Internal.Auth;
using Broker.Core.Internal.Subscriptions;

namespace Broker.Core.Internal.Clients;

/// <summary>
/// The client's own subscriptions, by sid, with their shadows for the account's stream imports
/// (<see cref="ShadowSubscriptions"/>), which come and go with them and are rebuilt when the imports change.
/// </summary>
internal abstract partial class ClientBase
{
    // Guarded by the client itself (`lock (this)`, docs/locks.md's ClientBase.subscriptionsLock): a Lock of its own
    // was 40 B on every client (issue 25); nothing else locks a client.
    private SidTable subscriptions;

    /// <summary>
    /// Replaces the shadows of every subscription after the account's imports were replaced (reload). A lock per
    /// exporter's index is taken and released for each shadow, under the subscriptions lock (3 → 4).
    /// </summary>
    public void RebuildShadows()
    {
        lock (this)
        {
            foreach (var subscription in subscriptions.ToArray())
            {
                var previous = subscription.Shadows;
                subscription.Shadows = null;
                ShadowSubscriptions.Remove(previous);
                subscription.Shadows = ShadowSubscriptions.Create(this, subscription);
            }
        }
    }

    public int SubscriptionCount
    {
        get
        {
            lock (this)
            {
                return subscriptions.Count;
            }
        }
    }

    public Subscription[] GetSubscriptions()
    {
        lock (this)
        {
            return subscriptions.ToArray();
        }
    }

    /// <summary>
    /// Adds a subscription. A duplicate sid is ignored and the existing subscription kept, as nats-server does.
    /// </summary>
    protected SubscribeOutcome AddSubscription(Subscription subscription, int maxSubscriptions)
    {
        var sid = subscription.SidString;
        lock (this)
        {
            if (subscriptions.ContainsKey(sid))
            {
                return SubscribeOutcome.Duplicate;
            }

            if (maxSubscriptions > 0 && subscriptions.Count >= maxSubscriptions)
            {
                return SubscribeOutcome.TooMany;
            }

            if (!Account.SubList.Insert(subscription))
            {
                return SubscribeOutcome.InvalidSubject;
            }

            subscriptions.Add(subscription);
            subscription.Shadows = ShadowSubscriptions.Create(this, subscription);
        }

        return SubscribeOutcome.Added;
    }

    /// <summary>The subscription with <paramref name="sid"/>, if any.</summary>
    protected Subscription? FindSubscription(ReadOnlySpan<byte> sid)
    {
        lock (this)
        {
            return subscriptions.TryGetValue(Encoding.UTF8.GetString(sid), out var found) ? found : null;
        }
    }

    /// <summary>
    /// UNSUB: removes now, or after <paramref name="max"/> deliveries in total. Unknown sids are ignored.
    /// </summary>
    protected void Unsubscribe(ReadOnlySpan<byte> sid, long max)
    {
        Subscription? subscription;
        lock (this)
        {
            if (!subscriptions.TryGetValue(Encoding.UTF8.GetString(sid), out subscription))
            {
                return;
            }
        }

        if (max > 0 && Interlocked.Read(ref subscription.Delivered) < max)
        {
            subscription.Max = max;

            // A delivery may have crossed the limit between the check and the store.
            if (Interlocked.Read(ref subscription.Delivered) < max)
            {
                return;
            }
        }

        RemoveSubscription(subscription);
    }

    /// <summary>Removes one subscription from the client and the index; safe to call twice.</summary>
    public void RemoveSubscription(Subscription subscription)
    {
        Subscription[]? shadows;
        lock (this)
        {
            if (subscription.Closed)
            {
                return;
            }

            subscription.Closed = true;
            subscriptions.Remove(subscription.SidString);
            ShrinkSubscriptionsIfSparse();
            shadows = subscription.Shadows;
            subscription.Shadows = null;
        }

        Account.SubList.Remove(subscription);
        ShadowSubscriptions.Remove(shadows);
        Account.ReverseRoutes.SubscriptionRemoved(subscription.Subject);
        OnSubscriptionRemoved(subscription);
    }

    /// <summary>How many subscriptions the client's map holds without growing (tests read it).</summary>
    internal int SubscriptionCapacity
    {
        get
        {
            lock (this)
            {
                return subscriptions.Capacity;
            }
        }
    }

    /// <summary>The capacity from which a subscription map a quarter full is shrunk.</summary>
    internal const int ShrinkSubscriptionsFrom = 1024;

    // A client that held thousands of subscriptions (an adapter's bus client serving 10,000 MQTT QoS 1 sessions) keeps
    // its map's grown buckets after they went: a Dictionary never shrinks by itself (issue 25: 420 KB after 10,000
    // sessions left). Trimming to twice what is left whenever it falls under a quarter keeps the copies linear overall.
    private void ShrinkSubscriptionsIfSparse()
    {
        if (subscriptions.Capacity >= ShrinkSubscriptionsFrom && subscriptions.Count < subscriptions.Capacity / 4)
        {
            subscriptions.TrimExcess(subscriptions.Count * 2);
        }
    }

    /// <summary>Called after a subscription was removed (the NATS client traces it as nats-server's DELSUB).</summary>
    protected virtual void OnSubscriptionRemoved(Subscription subscription)
    {
    }

    /// <summary>
    /// Applies permissions a reload gave the client to its subscriptions (nats-server <c>processSubsOnConfigReload</c>):
    /// those still allowed get their delivery check renewed, the others are removed, with whatever is still queued for
    /// them, and returned for the caller to report.
    /// </summary>
    protected List<Subscription> ApplyToSubscriptions(ClientPermissions? permissions)
    {
        var removed = new List<Subscription>();
        foreach (var subscription in GetSubscriptions())
        {
            if (permissions is null || permissions.CanSubscribe(subscription.Subject, subscription.Queue))
            {
                subscription.CheckDenyOnDelivery = permissions?.NeedsDeliveryCheck(subscription.Subject, subscription.Queue) ?? false;
                continue;
            }

            subscription.Cancelled = true;
            RemoveSubscription(subscription);
            removed.Add(subscription);
        }

        return removed;
    }

    /// <summary>Removes every subscription (the client is closing).</summary>
    protected void RemoveAllSubscriptions()
    {
        Subscription[] all;
        lock (this)
        {
            all = subscriptions.ToArray();
            subscriptions.Clear();
            foreach (var subscription in all)
            {
                subscription.Closed = true;
            }
        }

        if (all.Length > 0)
        {
            Account.SubList.RemoveBatch(all);
            foreach (var subscription in all)
            {
                var shadows = subscription.Shadows;
                subscription.Shadows = null;
                ShadowSubscriptions.Remove(shadows);
            }

            // Routes back to replies nobody here wants any more go now (nats-server checkForReverseEntries).
            if (Account.ReverseRoutes.Count > 0)
            {
                foreach (var subscription in all)
                {
                    Account.ReverseRoutes.SubscriptionRemoved(subscription.Subject);
                }
            }

            foreach (var subscription in all)
            {
                OnSubscriptionRemoved(subscription);
            }
        }
    }

    protected enum SubscribeOutcome
    {
        Added,
        Duplicate,
        TooMany,
        InvalidSubject,
    }
}
