using Broker.Core.Internal.Monitoring.Http;
using Broker.Core.Internal.Monitoring.Models;

namespace Broker.Core.Internal.Monitoring;

/// <summary>/leafz: the leaf node links connected now, with the hub's interest when <c>subs</c> is asked for; <c>acc</c> picks one account.</summary>
internal sealed partial class MonitorEndpoints
{
    public HttpResponse Leafz(QueryString query)
    {
        var reader = new QueryReader(query);
        var subscriptions = reader.Bool("subs");
        var account = reader.Text("acc");
        if (reader.Error is { } error)
        {
            return BadRequest(error);
        }

        return HttpResponse.Json(MonitorJson.Serialize(CreateLeafz(subscriptions, account)));
    }

    internal Leafz CreateLeafz(bool subscriptions, string account)
    {
        var leafz = new Leafz { ServerId = core.ServerId, Now = DateTime.UtcNow };
        foreach (var link in core.LeafNodes?.Links ?? [])
        {
            if (account.Length > 0 && link.Account.Name != account)
            {
                continue;
            }

            var interest = link.RemoteInterest();
            (leafz.Leafs ??= []).Add(new LeafzEntry
            {
                Account = link.Account.Name,
                Ip = link.RemoteEndPoint is { } hub ? (hub.Address.IsIPv4MappedToIPv6 ? hub.Address.MapToIPv4() : hub.Address).ToString() : string.Empty,
                Port = link.RemoteEndPoint?.Port ?? 0,
                Rtt = GoFormat.Duration(TimeSpan.FromTicks(link.RoundTripNanoseconds / 100)),
                InMsgs = Interlocked.Read(ref link.InMessages),
                OutMsgs = Interlocked.Read(ref link.OutMessages),
                InBytes = Interlocked.Read(ref link.InBytes),
                OutBytes = Interlocked.Read(ref link.OutBytes),
                Subscriptions = interest.Length,
                // nats-server lists each subscription's subject, a queue subscription's without its group.
                SubscriptionsList = subscriptions && interest.Length > 0 ? [.. interest.Select(i => Leaf.LeafInterest.SubjectOf(i.Key))] : null,
            });
        }

        leafz.LeafNodes = leafz.Leafs?.Count ?? 0;
        return leafz;
    }

    // /varz leaf: the hub's listener (nats-server's default TLS timeout with it), the remotes as configured, their
    // URLs without credentials.
    private LeafVarz CreateLeafVarz()
    {
        var hub = core.Options.LeafNodes.Hub;
        var remotes = core.Options.LeafNodes.Remotes;
        var varz = new LeafVarz();
        if (hub.IsEnabled)
        {
            varz.Host = string.IsNullOrEmpty(hub.Host) ? null : hub.Host;
            varz.Port = core.LeafNodes?.Hub?.EndPoint?.Port ?? hub.Port;
            varz.AuthTimeout = hub.AuthTimeout.TotalSeconds;
            varz.TlsTimeout = hub.Tls is { Timeout.Ticks: > 0 } tls ? tls.Timeout.TotalSeconds : 2;
            varz.TlsRequired = hub.Tls is not null;
            varz.TlsVerify = hub.Tls is { Verify: true };
        }

        if (remotes.Count == 0)
        {
            return varz;
        }

        varz.Remotes = [.. remotes.Select(r => new LeafRemoteVarz
        {
            LocalAccount = string.IsNullOrEmpty(r.Account) ? Internal.Accounts.Account.GlobalName : r.Account,
            Urls = [.. r.Urls.Select(u => Uri.TryCreate(u.Trim(), UriKind.Absolute, out var uri) ? uri.Host + ":" + uri.Port.ToString(System.Globalization.CultureInfo.InvariantCulture) : u)],
            Deny = r.DenyExports.Count + r.DenyImports.Count == 0 ? null : new LeafDenyVarz
            {
                Exports = r.DenyExports.Count > 0 ? [.. r.DenyExports] : null,
                Imports = r.DenyImports.Count > 0 ? [.. r.DenyImports] : null,
            },
        })];
        return varz;
    }
}
