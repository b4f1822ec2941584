using System.Buffers;
using System.Text;
using Broker.Core.Internal.Accounts;
using Broker.Core.Internal.Clients;
using Broker.Core.Internal.Leaf;
using Broker.Core.Internal.Subscriptions;

namespace Broker.Core.Internal.Routes;

/// <summary>
/// One account of a route (nats-server's <c>ROUTER</c> client seen from one account): the member's interest in the
/// account as subscriptions of this client (one per <c>subject</c> or <c>subject queue</c> key, as RS+ names them),
/// the member's messages published into the account (<see cref="LeafFanout.DeliverFromLink"/>: local subscribers, the
/// named queue groups and the leaf node links to this broker's spokes, never another route), and ours sent as
/// <c>RMSG acc ...</c> on the route. It receives the account's interest changes (<see cref="IInterestLink"/>: the local
/// interest and that of the spokes) and writes them as RS+/RS-; its own changes go to the spokes' links
/// (<see cref="LeafInterest.LinkChanged"/>).
/// </summary>
internal sealed class RouteAccountLink : LinkClient, IInterestLink
{
    private readonly RouteConnection route;
    private readonly byte[] rmsg;
    private readonly byte[] hmsg;
    private readonly Dictionary<string, int> weights = new(StringComparer.Ordinal);
    private readonly Lock weightsGate = new();
    private LeafFanout? inbound;

    public RouteAccountLink(RouteConnection route, Account account)
        : base(route.Server, ClientKind.Route, account)
    {
        this.route = route;
        Echo = false;
        rmsg = Encoding.UTF8.GetBytes("RMSG " + account.Name + " ");
        hmsg = Encoding.UTF8.GetBytes("HMSG " + account.Name + " ");
    }

    public override bool IsClosed => route.IsClosed;

    /// <summary>The member's interest in this account: keys with their weights (1 for plain subscriptions).</summary>
    public KeyValuePair<string, int>[] RemoteInterest()
    {
        lock (weightsGate)
        {
            return [.. weights];
        }
    }

    /// <summary>The member's weight for an interest key (1 for a plain subject), 0 when it has none.</summary>
    public int WeightOf(string key)
    {
        lock (weightsGate)
        {
            return weights.GetValueOrDefault(key);
        }
    }

    /// <summary>RS+ <c>subject [queue weight]</c> (the account already taken off): the member's interest, a subscription per key weighing <paramref name="weight"/> in queue picks.</summary>
    public void AddInterest(ReadOnlySpan<byte> subject, ReadOnlySpan<byte> queue, ReadOnlySpan<byte> key, int weight)
    {
        var keyString = Encoding.UTF8.GetString(key);
        bool known;
        lock (weightsGate)
        {
            known = weights.ContainsKey(keyString);
            weights[keyString] = weight;
        }

        SetInterest(subject, queue, key, weight, known);
        LeafInterest.Of(Account).LinkChanged(this, keyString);
    }

    /// <summary>RS- <c>subject [queue]</c>: the key exactly.</summary>
    public void RemoveInterest(ReadOnlySpan<byte> key)
    {
        var keyString = Encoding.UTF8.GetString(key);
        lock (weightsGate)
        {
            weights.Remove(keyString);
        }

        Unsubscribe(key, 0);
        LeafInterest.Of(Account).LinkChanged(this, keyString);
    }

    /// <summary>A message from the member: to local subscribers, one member of each named queue group and the spokes' links.</summary>
    public void Publish(ReadOnlySpan<byte> subject, ReadOnlySpan<byte> replyTo, in ReadOnlySequence<byte> headers, in ReadOnlySequence<byte> payload, ReadOnlySpan<byte> queues)
    {
        var size = headers.Length + payload.Length;
        InMessages++;
        InBytes += size;
        Server.Statistics.AddIn(1, size);
        var result = Account.SubList.Match(subject);
        if (result.IsEmpty)
        {
            return;
        }

        var delivered = (inbound ??= new LeafFanout(this)).DeliverFromLink(result, subject, subject, replyTo, headers, payload, queues);
        CountDelivered(delivered, size);
    }

    public override bool SendMessage(ClientBase producer, ReadOnlySpan<byte> subject, ReadOnlySpan<byte> deliverAs, ReadOnlySpan<byte> replyTo, in ReadOnlySequence<byte> headers, in ReadOnlySequence<byte> payload, ReadOnlySpan<byte[]?> queues)
    {
        return route.SendMessage(producer, this, rmsg, hmsg, subject, deliverAs, replyTo, headers, payload, queues);
    }

    public override Task? FlushOutput() => route.FlushOutput();

    /// <summary>An interest change of the account: RS+ with the weight for a queue key, RS+ or RS- for a plain one.</summary>
    public void SendInterest(string key, int n)
    {
        if (MaySend(key))
        {
            route.SendProtocol(Encoding.UTF8.GetBytes(InterestLine(key, n)));
        }
    }

    /// <summary>The account's whole interest when the route is registered (nats-server's <c>sendSubsToRoute</c>).</summary>
    public void SendInterestSnapshot(Dictionary<string, int> counts, string loopSubject)
    {
        var lines = new StringBuilder();
        foreach (var (key, n) in counts)
        {
            if (MaySend(key))
            {
                lines.Append(InterestLine(key, n));
            }
        }

        if (lines.Length > 0)
        {
            route.SendProtocol(Encoding.UTF8.GetBytes(lines.ToString()));
        }
    }

    // Never JetStream's API; only what cluster.permissions.import allows (nats-server's canImport on the key's subject).
    private bool MaySend(string key) => RouteInterestFilter.MaySend(key) && (route.Permissions is not { } permissions || permissions.CanPublish(Encoding.UTF8.GetBytes(LeafInterest.SubjectOf(key))));

    // addRouteSubOrUnsubProtoToBuf: "RS+ acc key[ weight]" while n > 0 (the weight for queue keys), "RS- acc key" at 0.
    private string InterestLine(string key, int n)
    {
        if (n <= 0)
        {
            return "RS- " + Account.Name + " " + key + "\r\n";
        }

        return key.Contains(' ', StringComparison.Ordinal)
            ? "RS+ " + Account.Name + " " + key + " " + n.ToString(System.Globalization.CultureInfo.InvariantCulture) + "\r\n"
            : "RS+ " + Account.Name + " " + key + "\r\n";
    }

    /// <summary>The route closed: the member's interest leaves the account.</summary>
    public void Drop() => RemoveAllSubscriptions();
}

/// <summary>
/// What an account's interest does not send over routes: JetStream's API subjects. nats-server serves them through
/// service imports, which it never propagates, so each server answers its own clients; the broker's JetStream stays
/// its own (docs/scale-out.md).
/// </summary>
internal static class RouteInterestFilter
{
    public static bool MaySend(string key) => !key.StartsWith("$JS.API.", StringComparison.Ordinal) && !key.StartsWith("$JS.API ", StringComparison.Ordinal);
}
