using Broker.Core.Internal.Clients;
using Broker.Core.Internal.Monitoring.Models;
using Broker.Core.Internal.Subscriptions;

namespace Broker.Core.Internal.Monitoring;

/// <summary>
/// The last N closed connections with their final statistics, for <c>/connz?state=closed</c> (nats-server's
/// <c>closedRingBuffer</c>). Adding past the capacity drops the oldest. Closing is not a hot path: one lock.
/// Records are compact (<see cref="ClosedConnection"/>) and share equal strings and profiles through counted tables,
/// released as records drop out, so a full ring of 10,000 holds one "127.0.0.1" and one client version; equal names
/// closed near each other share one copy (issue 25: the ring was most of what stayed after 10,000 clients left).
/// </summary>
internal sealed class ClosedConnectionRing
{
    // Names are shared through a few recent slots rather than the counted table: client names are often all distinct
    // (MQTT client ids), and a counted entry per distinct name cost more than the name (~64 B of table for a 48 B
    // "session-1234": 0.63 MB of the 2.5 MB the ring held after 10,000 MQTT sessions left, issue 25); equal names
    // that come close together (one application's connections) still share one copy.
    private const int RecentNameSlots = 128;

    private readonly int capacity;
    private readonly Lock sync = new();
    private readonly SharedValues<ClosedProfile> profiles = new();
    private readonly SharedValues<string> strings = new(StringComparer.Ordinal);

    // The records themselves (structs), oldest at head: grown by doubling up to the capacity and no further (a Queue
    // doubles past it: 16,384 slots for 10,000 records), then overwritten in place.
    private ClosedConnection[] items = [];
    private int head;
    private int count;
    private string?[]? recentNames;

    public ClosedConnectionRing(int capacity)
    {
        this.capacity = capacity;
    }

    /// <summary>Whether closed connections are remembered at all (capacity above 0).</summary>
    public bool Enabled => capacity > 0;

    /// <summary>
    /// What a closing connection keeps for its record: its subscriptions, taken before they are removed, when records
    /// are kept; none otherwise.
    /// </summary>
    public Subscription[] SubscriptionsToKeep(ClientBase client) => Enabled ? client.GetSubscriptions() : [];

    /// <summary>What the closed connections sent and received, per account (for /accstatz; kept whatever the capacity).</summary>
    public AccountTraffic Traffic { get; } = new();

    /// <summary>Remembers a closed connection with its final counters and the subscriptions it had.</summary>
    public void Record(ClientBase client, Subscription[] subscriptions)
    {
        Traffic.Retire(client);
        if (Enabled)
        {
            Add(ConnectionSnapshot.Closed(client, subscriptions));
        }
    }

    public void Add(ClosedConnection connection)
    {
        if (!Enabled)
        {
            return;
        }

        lock (sync)
        {
            Share(ref connection);
            if (count == capacity)
            {
                Forget(in items[head]);
                items[head] = connection;
                head = head + 1 == capacity ? 0 : head + 1;
                return;
            }

            if (count == items.Length)
            {
                Grow();
            }

            items[(head + count) % items.Length] = connection;
            count++;
        }
    }

    // Under the lock: the records in order from 0, in an array twice as long (at most the capacity).
    private void Grow()
    {
        var grown = new ClosedConnection[Math.Min(capacity, Math.Max(16, items.Length * 2))];
        CopyInOrder(grown);
        items = grown;
        head = 0;
    }

    private void CopyInOrder(ClosedConnection[] destination)
    {
        var first = Math.Min(count, items.Length - head);
        Array.Copy(items, head, destination, 0, first);
        Array.Copy(items, 0, destination, first, count - first);
    }

    /// <summary>Distinct strings and profiles the records share now, names aside (tests read it).</summary>
    internal (int Strings, int Profiles) SharedCounts
    {
        get
        {
            lock (sync)
            {
                return (strings.Count, profiles.Count);
            }
        }
    }

    // Under the lock: the record takes the shared copies of its strings; Forget releases exactly what Share took.
    private void Share(ref ClosedConnection connection)
    {
        var p = connection.Profile;
        if (!profiles.Contains(p))
        {
            // The first of its kind: its own strings are shared too (the address, language and version of other kinds).
            p = p with
            {
                Type = strings.Acquire(p.Type)!,
                Ip = strings.Acquire(p.Ip)!,
                Reason = strings.Acquire(p.Reason),
                Lang = strings.Acquire(p.Lang),
                Version = strings.Acquire(p.Version),
            };
        }

        connection.Profile = profiles.Acquire(p)!;
        connection.Name = RecentName(connection.Name);
    }

    // Under the lock: the copy of an equal name seen recently, else this one, remembered in its slot.
    private string? RecentName(string? name)
    {
        if (name is null)
        {
            return null;
        }

        recentNames ??= new string?[RecentNameSlots];
        ref var slot = ref recentNames[(uint)string.GetHashCode(name) % RecentNameSlots];
        if (slot is not null && string.Equals(slot, name, StringComparison.Ordinal))
        {
            return slot;
        }

        slot = name;
        return name;
    }

    private void Forget(in ClosedConnection connection)
    {
        var p = connection.Profile;
        if (profiles.Release(p))
        {
            strings.Release(p.Type);
            strings.Release(p.Ip);
            strings.Release(p.Reason);
            strings.Release(p.Lang);
            strings.Release(p.Version);
        }
    }

    /// <summary>The remembered connections, oldest first.</summary>
    public ClosedConnection[] Snapshot()
    {
        lock (sync)
        {
            var snapshot = new ClosedConnection[count];
            CopyInOrder(snapshot);
            return snapshot;
        }
    }
}
