using Broker.Core.Internal.Clients;
using Broker.Core.Internal.Monitoring.Models;
using Broker.Core.Internal.Subscriptions;

namespace Broker.Core.Internal.Monitoring;

/// <summary>
/// The last N closed connections with their final statistics, for <c>/connz?state=closed</c> (nats-server's
/// <c>closedRingBuffer</c>). Adding past the capacity drops the oldest. Closing is not a hot path: one lock.
/// Records are compact (<see cref="ClosedConnection"/>) and share equal strings and profiles through counted tables,
/// released as records drop out, so a full ring of 10,000 holds one "127.0.0.1", one client version, one name per
/// distinct name (issue 25: the ring was most of what stayed after 10,000 clients left).
/// </summary>
internal sealed class ClosedConnectionRing
{
    private readonly int capacity;
    private readonly Queue<ClosedConnection> items = new();
    private readonly Lock sync = new();
    private readonly SharedValues<ClosedProfile> profiles = new();
    private readonly SharedValues<string> strings = new(StringComparer.Ordinal);

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
            if (items.Count == capacity)
            {
                Forget(items.Dequeue());
            }

            Share(connection);
            items.Enqueue(connection);
        }
    }

    /// <summary>Distinct strings and profiles the records share now (tests read it).</summary>
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
    private void Share(ClosedConnection connection)
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
        connection.Name = strings.Acquire(connection.Name);
    }

    private void Forget(ClosedConnection connection)
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

        strings.Release(connection.Name);
    }

    /// <summary>The remembered connections, oldest first.</summary>
    public ClosedConnection[] Snapshot()
    {
        lock (sync)
        {
            return [.. items];
        }
    }
}
