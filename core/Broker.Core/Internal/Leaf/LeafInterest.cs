using System.Text;
using Broker.Core.Internal.Accounts;
using Broker.Core.Internal.Clients;
using Broker.Core.Internal.Subscriptions;

namespace Broker.Core.Internal.Leaf;

/// <summary>
/// The interest an account sends over its links, to leaf node links (nats-server's leaf <c>smap</c>) and to routes
/// (its route subscription map): every subscription in the account's index except the links' own
/// (<see cref="LinkClient.IsLink"/>), counted by key (<c>subject</c> or <c>subject queue</c>), plus, for leaf links,
/// the account's loop detection subject <c>$LDS.&lt;nuid&gt;</c>, plus the interest other links brought where
/// nats-server relays it (<see cref="Sees"/>: <c>updateSmap</c>, <c>updateLeafNodes</c> and
/// <c>processLeafSub</c>'s route update): a leaf link to a spoke (accepted, the broker is its hub) is told every other
/// link's interest, routes' included; a leaf link to a hub (solicited) and a route are told only that of the spokes'
/// links. A link gets the whole map when it connects (<see cref="Attach"/>), then the changes: a plain key when it
/// appears or goes, a queue key with its new weight (the sum over its sources) on every change, as nats-server's
/// <c>updateSmap</c> and <c>updateRouteSubscriptionMap</c>; a key goes (LS-/RS-) only when its last source does. Made
/// once per account (<see cref="Of"/>) when the broker is built.
/// </summary>
/// <remarks>
/// Told of changes by the account's <see cref="SubList.Observer"/>, outside the index's lock. A subscription counts once
/// (the set of counted ones), and one already closed is not counted, so a removal that overtakes its own insertion
/// leaves nothing behind. Writes to the links happen under <see cref="gate"/> (lock order: this, then the link's
/// weights, then its output).
/// </remarks>
internal sealed class LeafInterest
{
    private readonly Lock gate = new();
    private readonly HashSet<Subscription> counted = [];
    private readonly Dictionary<string, int> counts = new(StringComparer.Ordinal);
    // Replaced as a whole under the gate, so a link closing while interest is sent does not disturb the loop.
    private IInterestLink[] links = [];

    // How many attached leaf links go to spokes: without one a route's interest goes nowhere (read without the gate).
    private volatile int spokeLinks;

    // What each link was last told per key (its smap): the local count plus the weights of the links it may see.
    private readonly Dictionary<IInterestLink, Dictionary<string, int>> told = new(ReferenceEqualityComparer.Instance);

    public LeafInterest(Account account)
    {
        Account = account;
        LoopSubject = "$LDS." + Events.EventIds.Next();
        LoopSubjectBytes = Encoding.UTF8.GetBytes(LoopSubject);
    }

    public Account Account { get; }

    /// <summary>
    /// The interest of <paramref name="account"/>, made and attached to its index the first time (what the index
    /// already holds, its service imports, is counted then). Called while the broker is built, before any client
    /// subscribes.
    /// </summary>
    public static LeafInterest Of(Account account)
    {
        if (account.SubList.Observer is { } existing)
        {
            return existing;
        }

        var interest = new LeafInterest(account);
        account.SubList.Observer = interest;
        foreach (var subscription in account.SubList.Snapshot())
        {
            interest.Added(subscription);
        }

        return interest;
    }

    /// <summary>The account's loop detection subject: seeing it come back from a hub means a loop.</summary>
    public string LoopSubject { get; }

    public byte[] LoopSubjectBytes { get; }

    /// <summary>The leaf node links of this account that are connected now.</summary>
    public LeafConnection[] Links
    {
        get
        {
            lock (gate)
            {
                return [.. links.OfType<LeafConnection>()];
            }
        }
    }

    /// <summary>A subscription was inserted into the account's index.</summary>
    public void Added(Subscription subscription)
    {
        if (LinkClient.IsLink(subscription.Client.Kind))
        {
            return;
        }

        lock (gate)
        {
            if (subscription.Closed || !counted.Add(subscription))
            {
                return;
            }

            var key = Key(subscription);
            counts.TryGetValue(key, out var n);
            counts[key] = n + 1;
            Refresh(key, except: null);
        }
    }

    /// <summary>A subscription was removed from the account's index.</summary>
    public void Removed(Subscription subscription)
    {
        if (LinkClient.IsLink(subscription.Client.Kind))
        {
            return;
        }

        lock (gate)
        {
            if (!counted.Remove(subscription))
            {
                return;
            }

            var key = Key(subscription);
            counts.TryGetValue(key, out var n);
            n--;
            if (n > 0)
            {
                counts[key] = n;
            }
            else
            {
                counts.Remove(key);
            }

            Refresh(key, except: null);
        }
    }

    /// <summary>
    /// Adds a link that finished its handshake and sends it the whole interest, loop subject included; what a leaf link
    /// already brought goes to the links that may see it.
    /// </summary>
    public void Attach(IInterestLink link)
    {
        lock (gate)
        {
            links = [.. links, link];
            spokeLinks += IsSpokeLink(link) ? 1 : 0;
            var keys = new HashSet<string>(counts.Keys, StringComparer.Ordinal);
            foreach (var other in links)
            {
                if (Sees(link, other))
                {
                    keys.UnionWith(other.RemoteInterest().Select(k => k.Key));
                }
            }

            var map = new Dictionary<string, int>(StringComparer.Ordinal);
            foreach (var key in keys)
            {
                if (Want(link, key) is var n and > 0)
                {
                    map[key] = n;
                }
            }

            told[link] = map;
            link.SendInterestSnapshot(map, LoopSubject);
            RefreshAll(link);
        }
    }

    /// <summary>Removes a link that closed; the interest it brought leaves the other links.</summary>
    public void Detach(IInterestLink link)
    {
        lock (gate)
        {
            if (!told.Remove(link))
            {
                return;
            }

            links = Array.FindAll(links, l => !ReferenceEquals(l, link));
            spokeLinks -= IsSpokeLink(link) ? 1 : 0;
            RefreshAll(link);
        }
    }

    /// <summary>
    /// A link's interest in <paramref name="key"/> changed (LS+/LS-, RS+/RS-): the links that may see it are told. A
    /// route's change costs nothing while no spoke is linked (only spokes' links see routes' interest).
    /// </summary>
    public void LinkChanged(IInterestLink link, string key)
    {
        if (link is not LeafConnection && spokeLinks == 0)
        {
            return;
        }

        lock (gate)
        {
            if (told.ContainsKey(link))
            {
                Refresh(key, except: link);
            }
        }
    }

    // Every key a link brought, refreshed on the others (it came or went).
    private void RefreshAll(IInterestLink link)
    {
        foreach (var (key, _) in link.RemoteInterest())
        {
            Refresh(key, except: link);
        }
    }

    // Tells each link (but the one the change came from) its new count for the key: plain keys when they appear or go,
    // queue keys on every change of weight.
    private void Refresh(string key, IInterestLink? except)
    {
        foreach (var link in links)
        {
            if (ReferenceEquals(link, except) || !told.TryGetValue(link, out var map))
            {
                continue;
            }

            var n = Want(link, key);
            var old = map.GetValueOrDefault(key);
            if (n == old)
            {
                continue;
            }

            if (n > 0)
            {
                map[key] = n;
            }
            else
            {
                map.Remove(key);
            }

            if (old == 0 || n == 0 || key.Contains(' ', StringComparison.Ordinal))
            {
                link.SendInterest(key, n);
            }
        }
    }

    private int Want(IInterestLink link, string key)
    {
        var n = counts.GetValueOrDefault(key);
        foreach (var other in links)
        {
            if (Sees(link, other))
            {
                n += other.WeightOf(key);
            }
        }

        return n;
    }

    /// <summary>
    /// Whether <paramref name="link"/> is told the interest <paramref name="other"/> brought, and so is sent the messages
    /// that came from it (<see cref="LeafFanout"/>). nats-server's rules: a leaf link to a spoke sees every other link
    /// (leaf links and routes: <c>initLeafNodeSmapAndSendSubs</c> takes all subscriptions for it); a leaf link to a hub
    /// and a route see only the spokes' links (<c>updateSmap</c>'s solicited filter, <c>processLeafSub</c> updating
    /// the routes for a spoke's interest only); a route never sees another route (routes are one hop).
    /// </summary>
    public static bool Sees(IInterestLink link, IInterestLink other)
        => !ReferenceEquals(link, other) && (IsSpokeLink(link) || IsSpokeLink(other));

    // A leaf link this broker accepted: the other side is its spoke.
    private static bool IsSpokeLink(IInterestLink link) => link is LeafConnection { IsAccepted: true };

    /// <summary>The interest keys and their counts now, for /leafz's subscription list.</summary>
    public KeyValuePair<string, int>[] Snapshot()
    {
        lock (gate)
        {
            return [.. counts];
        }
    }

    private static string Key(Subscription subscription)
        => subscription.Queue is null ? subscription.SubjectString : subscription.SubjectString + " " + subscription.QueueString;

    /// <summary>The subject of an interest key (<c>subject</c> or <c>subject queue</c>, as <see cref="Key"/> and LS+ write it).</summary>
    public static string SubjectOf(string key) => key.IndexOf(' ', StringComparison.Ordinal) is var space and >= 0 ? key[..space] : key;
}
