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
/// <param name="Info">The final view, copied for each answer.</param>
/// <param name="AuthorizedUser">The user it authenticated as, shown with <c>auth</c>.</param>
/// <param name="Account">
/// The name of the account the connection was in, empty for the global account (nats-server's <c>closedClient.acc</c>).
/// </param>
/// <param name="Subscriptions">The subscriptions it had when it closed.</param>
/// <param name="Jwt">In operator mode, what its user JWT gave it (/connz <c>jwt</c>, <c>issuer_key</c>, <c>name_tag</c>, <c>tags</c> with <c>auth</c>).</param>
internal sealed record ClosedConnection(ConnInfo Info, string? AuthorizedUser, string Account, SubDetail[] Subscriptions, Auth.JwtUser? Jwt = null);
