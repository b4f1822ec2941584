using Broker.Core.Internal.Monitoring.Http;
using Broker.Core.Internal.Monitoring.Models;

namespace Broker.Core.Internal.Monitoring;

/// <summary>/routez: the routes registered now, with the member's interest when <c>subs</c> is asked for; /varz's <c>cluster</c> block.</summary>
internal sealed partial class MonitorEndpoints
{
    public HttpResponse Routez(QueryString query)
    {
        var reader = new QueryReader(query);
        var subscriptions = reader.Bool("subs");
        if (reader.Error is { } error)
        {
            return BadRequest(error);
        }

        return HttpResponse.Json(MonitorJson.Serialize(CreateRoutez(subscriptions)));
    }

    internal Routez CreateRoutez(bool subscriptions)
    {
        var now = DateTime.UtcNow;
        var routez = new Routez { ServerId = core.ServerId, Now = now };
        foreach (var route in core.Routes?.Routes ?? [])
        {
            var interest = route.Links.SelectMany(l => l.RemoteInterest()).ToList();
            var inMessages = route.Links.Sum(l => Interlocked.Read(ref l.InMessages));
            var inBytes = route.Links.Sum(l => Interlocked.Read(ref l.InBytes));
            var (outMessages, outBytes) = route.Sent;
            routez.Routes.Add(new RoutezEntry
            {
                Rid = route.Id,
                RemoteId = route.RemoteId,
                DidSolicit = route.DidSolicit,
                IsConfigured = route.IsExplicit,
                Ip = route.RemoteEndPoint is { } remote ? (remote.Address.IsIPv4MappedToIPv6 ? remote.Address.MapToIPv4() : remote.Address).ToString() : string.Empty,
                Port = route.RemoteEndPoint?.Port ?? 0,
                Start = route.StartedAt.UtcDateTime,
                LastActivity = now,
                Rtt = GoFormat.Duration(TimeSpan.FromTicks(route.RoundTripNanoseconds / 100)),
                Uptime = GoFormat.Uptime(now - route.StartedAt.UtcDateTime),
                Idle = "0s",
                InMsgs = inMessages,
                OutMsgs = outMessages,
                InBytes = inBytes,
                OutBytes = outBytes,
                Subscriptions = interest.Count,
                // nats-server lists each subscription's subject, a queue subscription's without its group.
                SubscriptionsList = subscriptions && interest.Count > 0 ? [.. interest.Select(i => Leaf.LeafInterest.SubjectOf(i.Key))] : null,
            });
        }

        routez.NumRoutes = routez.Routes.Count;
        return routez;
    }

    // /varz cluster: the route listener, the configured routes without credentials.
    private ClusterVarz CreateClusterVarz()
    {
        if (core.Routes is not { } routes)
        {
            return new ClusterVarz();
        }

        var options = routes.Options;
        return new ClusterVarz
        {
            Name = routes.Name,
            Addr = options.Host,
            ClusterPort = routes.EndPoint?.Port ?? options.Port,
            AuthTimeout = options.AuthTimeout.TotalSeconds,
            Urls = options.Routes.Count == 0 ? null : [.. options.Routes.Select(r => new Uri(r.Trim())).Select(u => u.Host + ":" + u.Port.ToString(System.Globalization.CultureInfo.InvariantCulture))],
            TlsTimeout = options.Tls?.Timeout.TotalSeconds ?? 2,
            TlsRequired = options.Tls is null ? null : true,
            TlsVerify = options.Tls is null ? null : true,
        };
    }
}
