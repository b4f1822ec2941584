using Broker.Core.Internal.Clients;
using Broker.Core.Internal.Monitoring.Models;
using Broker.Core.Internal.Subscriptions;

namespace Broker.Core.Internal.Monitoring;

/// <summary>
/// The last N closed connections with their final statistics, for <c>/connz?state=closed</c> (nats-server's
/// <c>closedRingBuffer</c>). Adding past the capacity drops the oldest. Closing is not a hot path: one lock.
/// </summary>
internal sealed class ClosedConnectionRing
{
    private readonly int capacity;
    private readonly Queue<ClosedConnection> items = new();
    private readonly Lock sync = new();

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

    /// <summary>Remembers a closed connection with its final counters and the subscriptions it had.</summary>
    public void Record(ClientBase client, Subscription[] subscriptions)
    {
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
                items.Dequeue();
            }

            items.Enqueue(connection);
        }
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

/// <summary>
/// A closed connection as /connz shows it: its final <see cref="ConnInfo"/> (never handed out itself; each answer
/// gets a copy), plus what only some queries show.
/// </summary>
internal sealed record ClosedConnection(ConnInfo Info, string? AuthorizedUser, SubDetail[] Subscriptions);
