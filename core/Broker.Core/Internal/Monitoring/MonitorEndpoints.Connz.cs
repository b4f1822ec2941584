using Broker.Core.Internal.Accounts;
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
        Account? filter = null;
        if (account.Length > 0 && !core.Accounts.TryGet(account, out filter))
        {
            // nats-server answers an unknown account with an empty page it has not even put its id on.
            return HttpResponse.Json(MonitorJson.Serialize(new Connz { Now = now, Offset = offset, Limit = limit, Connections = null }));
        }

        var infos = new List<ConnInfo>();
        CollectConnections(infos, state, cid, user, filter, auth, subs, subsDetail, now, out var total);
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
            Total = total,
            Offset = offset,
            Limit = limit,
            Connections = page,
        };
        return HttpResponse.Json(MonitorJson.Serialize(connz));
    }

    /// <summary>
    /// Collects the connections asked for. <paramref name="total"/> counts those of the asked state(s) and account
    /// before the user, cid and MQTT client filters, as nats-server's <c>total</c> does (it is taken before them). An
    /// open connection asked for by cid is found in any account, as nats-server finds it.
    /// The <c>user</c> filter applies with or without <c>auth</c>: nats-server 2.9.10 checks "filter by user or
    /// account only allowed with auth option" before reading the filters, so the check never fires.
    /// </summary>
    private void CollectConnections(List<ConnInfo> infos, ConnectionState state, ulong cid, string user, Account? account, bool auth, bool subs, bool subsDetail, DateTime now, out int total)
    {
        total = 0;
        if (state is ConnectionState.Open or ConnectionState.Any)
        {
            foreach (var client in OpenConnections())
            {
                // A connection still authenticating is in $G, as nats-server registers every new client there first.
                var inAccount = account is null || client.Account == account;
                if (inAccount)
                {
                    total++;
                }

                // nats-server looks a cid up among all open connections, whatever the account and user filters say.
                var wanted = cid > 0 ? client.Id == cid : inAccount && (user.Length == 0 || client.AuthorizedUser == user);
                if (!wanted)
                {
                    continue;
                }

                var info = ConnectionSnapshot.Open(client, now);
                if (auth)
                {
                    info.AuthorizedUser = client.AuthorizedUser;
                    info.Account = ShownAccount(client.Account.Name);
                    ConnectionSnapshot.AddJwt(info, (client as Clients.NatsClient)?.JwtUser);
                }

                if (subs || subsDetail)
                {
                    AddSubscriptions(info, ConnectionSnapshot.Details(client.GetSubscriptions(), withAccount: false), subsDetail);
                }

                infos.Add(info);
            }
        }

        if (state is ConnectionState.Closed or ConnectionState.Any)
        {
            // A cid found open is not looked for among the closed (nats-server does the same).
            var skipClosed = cid > 0 && infos.Count > 0;
            foreach (var closed in core.ClosedClients.Snapshot())
            {
                if (account is not null && closed.Account != account.Name)
                {
                    continue;
                }

                total++;
                if (skipClosed || (cid > 0 && closed.Cid != cid) || (user.Length > 0 && closed.AuthorizedUser != user))
                {
                    continue;
                }

                var info = closed.ToInfo();
                if (auth)
                {
                    info.AuthorizedUser = closed.AuthorizedUser;
                    info.Account = ShownAccount(closed.Account);
                    ConnectionSnapshot.AddJwt(info, closed.Jwt);
                }

                if (subs || subsDetail)
                {
                    AddSubscriptions(info, closed.SubscriptionDetails(), subsDetail);
                }

                infos.Add(info);
            }
        }
    }

    /// <summary>The <c>account</c> /connz shows with <c>auth</c>: none for the global account, as nats-server.</summary>
    private static string? ShownAccount(string name) => name.Length == 0 || name == Account.GlobalName ? null : name;

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
