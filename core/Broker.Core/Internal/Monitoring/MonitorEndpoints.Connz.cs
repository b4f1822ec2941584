using Broker.Core.Internal.Monitoring.Http;
using Broker.Core.Internal.Monitoring.Models;

namespace Broker.Core.Internal.Monitoring;

/// <summary>
/// /connz: open and closed connections, filtered, sorted and paged as nats-server's <c>Connz</c> does. The cid, start,
/// uptime and reason orders are ascending and every other one descending, as nats-server sorts them.
/// </summary>
internal sealed partial class MonitorEndpoints
{
    /// <summary>Connections listed when no limit is asked for (nats-server's <c>DefaultConnListSize</c>).</summary>
    public const int DefaultConnectionListSize = 1024;

    private static readonly string[] SortOptions =
        ["cid", "start", "subs", "pending", "msgs_to", "msgs_from", "bytes_to", "bytes_from", "last", "idle", "uptime", "stop", "reason", "rtt"];

    private enum ConnectionState
    {
        Open,
        Closed,
        Any,
    }

    public HttpResponse Connz(QueryString query)
    {
        var reader = new QueryReader(query);
        var sort = reader.Text("sort");
        var auth = reader.Bool("auth");
        var subsDetail = string.Equals(reader.Text("subs"), "detail", StringComparison.OrdinalIgnoreCase);
        var subs = !subsDetail && reader.Bool("subs");
        var offset = reader.Int("offset");
        var limit = reader.Int("limit");
        var cid = reader.UInt64("cid");
        var state = ParseState(ref reader, reader.Text("state"));
        var user = reader.Text("user");
        var account = reader.Text("acc");
        var mqttClient = reader.Text("mqtt_client");
        if (reader.Error is { } error)
        {
            return BadRequest(error);
        }

        if (sort.Length == 0)
        {
            sort = "cid";
        }
        else if (Array.IndexOf(SortOptions, sort) < 0)
        {
            return BadRequest("invalid sorting option: " + sort);
        }

        if (sort is "stop" or "reason" && state != ConnectionState.Closed)
        {
            return BadRequest($"sort by {sort} only valid on closed connections");
        }

        offset = Math.Max(offset, 0);
        limit = limit <= 0 ? DefaultConnectionListSize : limit;
        if (cid > 0)
        {
            limit = 1;
        }

        var now = DateTime.UtcNow;
        var infos = new List<ConnInfo>();

        // Every connection is in the global account; asking for another one finds nothing (nats-server: unknown account).
        if (account.Length == 0 || account == GlobalAccount)
        {
            CollectConnections(infos, state, cid, user, auth, subs, subsDetail, now);
        }

        if (mqttClient.Length > 0)
        {
            infos.RemoveAll(i => i.MqttClient != mqttClient);
        }

        var sorted = Sort(infos, sort, now);
        var start = Math.Min(offset, sorted.Count);
        var page = sorted.GetRange(start, Math.Min(limit, sorted.Count - start));
        var connz = new Connz
        {
            ServerId = core.ServerId,
            Now = now,
            NumConnections = page.Count,
            Total = sorted.Count,
            Offset = offset,
            Limit = limit,
            Connections = page,
        };
        return HttpResponse.Json(MonitorJson.Serialize(connz));
    }

    private void CollectConnections(List<ConnInfo> infos, ConnectionState state, ulong cid, string user, bool auth, bool subs, bool subsDetail, DateTime now)
    {
        if (state is ConnectionState.Open or ConnectionState.Any)
        {
            foreach (var client in OpenConnections())
            {
                if ((cid > 0 && client.Id != cid) || (user.Length > 0 && client.AuthorizedUser != user))
                {
                    continue;
                }

                var info = ConnectionSnapshot.Open(client, now);
                info.AuthorizedUser = auth ? client.AuthorizedUser : null;
                if (subs || subsDetail)
                {
                    AddSubscriptions(info, ConnectionSnapshot.Details(client.GetSubscriptions(), account: null), subsDetail);
                }

                infos.Add(info);
            }
        }

        // A cid found open is not looked for among the closed (nats-server does the same).
        if ((state is ConnectionState.Closed or ConnectionState.Any) && !(cid > 0 && infos.Count > 0))
        {
            foreach (var closed in core.ClosedClients.Snapshot())
            {
                if ((cid > 0 && closed.Info.Cid != cid) || (user.Length > 0 && closed.AuthorizedUser != user))
                {
                    continue;
                }

                var info = closed.Info.Clone();
                info.AuthorizedUser = auth ? closed.AuthorizedUser : null;
                if (subs || subsDetail)
                {
                    AddSubscriptions(info, closed.Subscriptions, subsDetail);
                }

                infos.Add(info);
            }
        }
    }

    private static void AddSubscriptions(ConnInfo info, SubDetail[] details, bool detail)
    {
        if (details.Length == 0)
        {
            return;
        }

        if (detail)
        {
            info.SubscriptionsListDetail = details;
        }
        else
        {
            info.SubscriptionsList = [.. details.Select(d => d.Subject)];
        }
    }

    private static ConnectionState ParseState(ref QueryReader reader, string text)
    {
        switch (text.ToLowerInvariant())
        {
            case "" or "open":
                return ConnectionState.Open;
            case "closed":
                return ConnectionState.Closed;
            case "any" or "all":
                return ConnectionState.Any;
            default:
                reader.Fail("Error decoding state for " + text);
                return ConnectionState.Open;
        }
    }

    /// <summary>Sorts as nats-server does; ties keep cid order so pages are stable.</summary>
    private static List<ConnInfo> Sort(List<ConnInfo> infos, string sort, DateTime now)
    {
        var byCid = infos.OrderBy(i => i.Cid);
        IEnumerable<ConnInfo> sorted = sort switch
        {
            "subs" => byCid.OrderByDescending(i => i.Subscriptions),
            "pending" => byCid.OrderByDescending(i => i.PendingBytes),
            "msgs_to" => byCid.OrderByDescending(i => i.OutMsgs),
            "msgs_from" => byCid.OrderByDescending(i => i.InMsgs),
            "bytes_to" => byCid.OrderByDescending(i => i.OutBytes),
            "bytes_from" => byCid.OrderByDescending(i => i.InBytes),
            "last" => byCid.OrderByDescending(i => i.LastActivity),
            "idle" => byCid.OrderByDescending(i => now - i.LastActivity),
            "uptime" => byCid.OrderBy(i => (i.Stop ?? now) - i.Start),
            "stop" => byCid.OrderByDescending(i => i.Stop ?? now),
            "reason" => byCid.OrderBy(i => i.Reason ?? string.Empty, StringComparer.Ordinal),
            "rtt" => byCid.OrderByDescending(i => i.RoundTrip),
            _ => byCid,
        };
        return [.. sorted];
    }
}
