using System.Text;
using Broker.Core.Internal.Accounts;
using Broker.Core.Internal.Clients;
using Broker.Core.Internal.Subscriptions;

namespace Broker.Core.Internal.Leaf;

/// <summary>
/// The interest an account sends over its links, to leaf node hubs (nats-server's leaf <c>smap</c>) and to routes
/// (its route subscription map): every subscription in the account's index except the links' own
/// (<see cref="LinkClient.IsLink"/>), counted by key (<c>subject</c> or <c>subject queue</c>), plus, for leaf links,
/// the account's loop detection subject <c>$LDS.&lt;nuid&gt;</c>. A link gets the whole map when it connects
/// (<see cref="Attach"/>), then the changes: a plain key when it appears or goes, a queue key with its new weight on
/// every change, as nats-server's <c>updateSmap</c> and <c>updateRouteSubscriptionMap</c>. Made once per account
/// (<see cref="Of"/>) when the broker is built.
/// </summary>
/// <remarks>
/// Told of changes by the account's <see cref="SubList.Observer"/>, outside the index's lock. A subscription counts once
/// (the set of counted ones), and one already closed is not counted, so a removal that overtakes its own insertion
/// leaves nothing behind. Writes to the links happen under <see cref="gate"/> (lock order: this, then the link's output).
/// </remarks>
internal sealed class LeafInterest
{
    private readonly Lock gate = new();
    private readonly HashSet<Subscription> counted = [];
    private readonly Dictionary<string, int> counts = new(StringComparer.Ordinal);
    // Replaced as a whole under the gate, so a link closing while interest is sent does not disturb the loop.
    private IInterestLink[] links = [];

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
            if (subscription.Queue is not null || n == 0)
            {
                Send(key, n + 1);
            }
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

            if (subscription.Queue is not null || n <= 0)
            {
                Send(key, n);
            }
        }
    }

    /// <summary>Adds a link that finished its handshake and sends it the whole interest, loop subject included.</summary>
    public void Attach(IInterestLink link)
    {
        lock (gate)
        {
            links = [.. links, link];
            link.SendInterestSnapshot(counts, LoopSubject);
        }
    }

    /// <summary>Removes a link that closed.</summary>
    public void Detach(IInterestLink link)
    {
        lock (gate)
        {
            links = Array.FindAll(links, l => !ReferenceEquals(l, link));
        }
    }

    /// <summary>The interest keys and their counts now, for /leafz's subscription list.</summary>
    public KeyValuePair<string, int>[] Snapshot()
    {
        lock (gate)
        {
            return [.. counts];
        }
    }

    private void Send(string key, int n)
    {
        foreach (var link in links)
        {
            link.SendInterest(key, n);
        }
    }

    private static string Key(Subscription subscription)
        => subscription.Queue is null ? subscription.SubjectString : subscription.SubjectString + " " + subscription.QueueString;

    /// <summary>The subject of an interest key (<c>subject</c> or <c>subject queue</c>, as <see cref="Key"/> and LS+ write it).</summary>
    public static string SubjectOf(string key) => key.IndexOf(' ', StringComparison.Ordinal) is var space and >= 0 ? key[..space] : key;
}
