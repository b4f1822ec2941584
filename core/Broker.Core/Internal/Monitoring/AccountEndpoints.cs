using System.Runtime.InteropServices;
using Broker.Core.Internal.Accounts;
using Broker.Core.Internal.Clients;
using Broker.Core.Internal.Monitoring.Http;
using Broker.Core.Internal.Monitoring.Models;

namespace Broker.Core.Internal.Monitoring;

/// <summary>
/// /accountz (the accounts and one account's detail) and /accstatz (each account's connections and traffic), as
/// nats-server 2.9.10 answers them: <c>system_account</c> names the system account (absent with
/// <c>no_system_account</c>), which is listed with the others and marked <c>is_system</c> in its detail. A collaborator of
/// <see cref="MonitorEndpoints"/> (its <see cref="MonitorEndpoints.Accounts"/>), also asked by the system account's
/// requests and events; it reads the broker's state and holds none of its own.
/// </summary>
internal sealed class AccountEndpoints(BrokerCore core)
{
    public HttpResponse Accountz(QueryString query)
    {
        var name = query.Get("acc");
        var accountz = new Accountz { ServerId = core.ServerId, Now = DateTime.UtcNow, SystemAccount = core.Accounts.SystemName };
        if (name.Length == 0)
        {
            accountz.Accounts = [.. core.Accounts.All.Select(a => a.Name)];
        }
        else if (core.Accounts.TryGet(name, out var account))
        {
            var statistics = account.SubList.GetStatistics();
            var sublistStats = new SublistStats();
            sublistStats.CopyFrom(statistics);
            accountz.AccountDetail = new AccountInfo
            {
                AccountName = account.Name,
                UpdateTime = account.UpdatedAt,
                IsSystem = account.IsSystem,
                ClientConnections = CountConnections(account),
                Subscriptions = statistics.NumSubscriptions,
                Mappings = Mappings(account),
                SublistStats = sublistStats,
                Expired = account.IsExpired,
                Exports = Exports(account),
                Imports = Imports(account),
                Responses = Responses(account),
            };
            AddJwt(accountz.AccountDetail, account.Jwt);
        }
        else
        {
            return MonitorEndpoints.BadRequest($"Account {name} does not exist");
        }

        return HttpResponse.Json(MonitorJson.Serialize(accountz));
    }

    // nats-server lists service exports, then stream exports; stream imports, then service imports.
    private static List<ExtExport>? Exports(Account account)
    {
        var exports = new List<ExtExport>();
        exports.AddRange(account.ServiceExports.Select(e => new ExtExport { Subject = e.Subject, Type = "service", ResponseType = e.ResponseTypeText, Latency = ExtServiceLatency.Of(e.Latency), ApprovedAccounts = e.Approved }));
        exports.AddRange(account.StreamExports.Select(e => new ExtExport { Subject = e.Subject, ApprovedAccounts = e.Accounts }));
        return exports.Count == 0 ? null : exports;
    }

    private static List<ExtImport>? Imports(Account account)
    {
        var imports = new List<ExtImport>();
        imports.AddRange(account.StreamImports.Select(i => new ExtImport { Subject = i.From, Account = i.Exporter.Name, LocalSubject = i.LocalSubject }));
        imports.AddRange(account.ServiceImports.Select(ServiceImport));
        return imports.Count == 0 ? null : imports;
    }

    private static SortedDictionary<string, ResponseImport>? Responses(Account account)
    {
        var routes = account.Responses.Snapshot();
        if (routes.Length == 0)
        {
            return null;
        }

        var responses = new SortedDictionary<string, ResponseImport>(StringComparer.Ordinal);
        foreach (var (reply, route) in routes)
        {
            responses[reply] = new ResponseImport
            {
                Subject = route.From,
                Account = route.Destination.Name,
                To = route.To,
                Share = route.Share,
                Tracking = route.Tracking is not null,
                TrackingHeader = route.Tracking?.Header,
                Latency = ExtServiceLatency.Of(route.Tracking?.Latency),
            };
        }

        return responses;
    }

    private static ExtImport ServiceImport(ServiceImport import) =>
        new() { Subject = import.From, Account = import.Destination.Name, To = import.To, Type = "service", Share = import.Share, Latency = ExtServiceLatency.Of(import.Export?.Latency) };

    // nats-server accountInfo: the JWT, its issuer, name and tags, the claims, and the revocations as times.
    private static void AddJwt(AccountInfo info, Jwt.AccountJwt? jwt)
    {
        if (jwt is null)
        {
            return;
        }

        var claims = jwt.Claims;
        info.Jwt = jwt.Token;
        info.IssuerKey = jwt.Issuer;
        info.NameTag = string.IsNullOrEmpty(claims.Name) ? null : claims.Name;
        info.Tags = claims.Nats.Tags is { Count: > 0 } tags ? tags : null;
        var payload = jwt.Token.Split('.')[1];
        using (var decoded = System.Text.Json.JsonDocument.Parse(System.Buffers.Text.Base64Url.DecodeFromChars(payload)))
        {
            info.DecodedJwt = decoded.RootElement.Clone();
        }

        if (claims.Nats.Revocations is { Count: > 0 } revocations)
        {
            info.RevokedUser = new SortedDictionary<string, DateTime>(StringComparer.Ordinal);
            foreach (var (key, at) in revocations)
            {
                info.RevokedUser[key] = DateTimeOffset.FromUnixTimeSeconds(at).UtcDateTime;
            }
        }
    }

    private static SortedDictionary<string, List<MapDest>>? Mappings(Account account)
    {
        if (account.Mappings is not { } mapper)
        {
            return null;
        }

        var mappings = new SortedDictionary<string, List<MapDest>>(StringComparer.Ordinal);
        foreach (var mapping in mapper.Mappings)
        {
            mappings[mapping.Source] = [.. mapping.Shown.Select(d => new MapDest { Subject = d.Subject, Weight = d.Weight, Cluster = d.Cluster })];
        }

        return mappings;
    }

    /// <summary>
    /// /accstatz: per account its connections and the messages its clients published (<c>received</c>) and were
    /// delivered (<c>sent</c>), closed connections included. Accounts without connections are left out unless
    /// <c>unused</c> is true, as nats-server does.
    /// </summary>
    public HttpResponse Accstatz(QueryString query)
    {
        var reader = new QueryReader(query);
        var unused = reader.Bool("unused");
        if (reader.Error is { } error)
        {
            return MonitorEndpoints.BadRequest(error);
        }

        var statz = AccountStats(accounts: null, unused);
        return HttpResponse.Json(MonitorJson.Serialize(new AccountStatz { ServerId = core.ServerId, Now = DateTime.UtcNow, Accounts = statz }));
    }

    /// <summary>
    /// Each account's connections and the messages its clients published (<c>received</c>) and were delivered
    /// (<c>sent</c>), closed connections included (nats-server <c>AccountStatz</c>): the accounts named, or all of them;
    /// those without connections only when <paramref name="unused"/>.
    /// </summary>
    internal List<AccountStat> AccountStats(IReadOnlyCollection<string>? accounts, bool unused)
    {
        // One pass over the clients: each account's connections and its live clients' counters.
        var live = new Dictionary<Account, (int Connections, AccountTraffic.Totals Totals)>();
        foreach (var (_, client) in core.Clients)
        {
            ref var entry = ref CollectionsMarshal.GetValueRefOrAddDefault(live, client.Account, out _);
            entry.Totals.Add(client);
            if (client is IClientConnection)
            {
                entry.Connections++;
            }
        }

        var statz = new List<AccountStat>();
        foreach (var account in core.Accounts.All)
        {
            if (accounts is not null && !accounts.Contains(account.Name))
            {
                continue;
            }

            live.TryGetValue(account, out var entry);
            var connections = entry.Connections;
            if (connections == 0 && !unused)
            {
                continue;
            }

            var totals = entry.Totals;
            totals.Add(core.ClosedClients.Traffic.Retired(account));
            statz.Add(new AccountStat
            {
                Account = account.Name,
                Connections = connections,
                TotalConnections = connections,
                Sent = new DataStats { Messages = totals.OutMessages, Bytes = totals.OutBytes },
                Received = new DataStats { Messages = totals.InMessages, Bytes = totals.InBytes },
                SlowConsumers = totals.SlowConsumers,
            });
        }

        return statz;
    }

    /// <summary>
    /// Connections in <paramref name="account"/> (nats-server <c>numLocalConnections</c>): in-process clients are not
    /// connections; a connection still authenticating is in <c>$G</c>, where nats-server registers every new client.
    /// </summary>
    private int CountConnections(Account account)
    {
        var count = 0;
        foreach (var (_, client) in core.Clients)
        {
            if (client is IClientConnection && client.Account == account)
            {
                count++;
            }
        }

        return count;
    }
}
