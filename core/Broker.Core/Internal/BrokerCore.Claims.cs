using Broker.Core.Internal.Accounts;
using Broker.Core.Internal.Clients;

namespace Broker.Core.Internal;

/// <summary>
/// Operator mode's claims updates reaching live connections (nats-server <c>updateAccountClaimsWithRefresh</c>): when
/// the account now has as many connections as its limit or more, its clients are taken newest first and those beyond
/// the limit closed (nats-server keeps the most recent ones); each remaining client is checked against the new limits
/// and revocations.
/// </summary>
internal sealed partial class BrokerCore
{
    private void ApplyClaimsUpdate(Account account)
    {
        var clients = new List<NatsClient>();
        foreach (var client in Clients.Values)
        {
            if (ReferenceEquals(client.Account, account) && client is NatsClient { IsClosed: false } nats)
            {
                clients.Add(nats);
            }
        }

        var max = account.Limits.MaxConnections;
        if (max >= 0 && clients.Count >= max)
        {
            clients.Sort(static (a, b) => b.StartedAt.CompareTo(a.StartedAt));
        }

        for (var i = 0; i < clients.Count; i++)
        {
            if (max >= 0 && i >= max)
            {
                clients[i].CloseForAccountConnections();
                continue;
            }

            clients[i].CheckClaimsUpdate();
        }
    }

    // An account's imports changed with a JWT: its service imports are subscribed, its clients' subscriptions get their shadows again.
    private void RebuildShadows(Account account)
    {
        account.SubscribeServices(this);
        foreach (var client in Clients.Values)
        {
            if (ReferenceEquals(client.Account, account))
            {
                client.RebuildShadows();
            }
        }
    }
}
