using System.Text;
using Broker.Core.Internal.Monitoring.Http;
using Broker.Core.Internal.Monitoring.Models;
using Broker.Core.Internal.Subscriptions;

namespace Broker.Core.Internal.Monitoring;

/// <summary>/subsz (alias /subscriptionsz) and /accountz: the subject index and the one account it serves.</summary>
internal sealed partial class MonitorEndpoints
{
    /// <summary>Subscriptions listed when no limit is asked for (nats-server's <c>DefaultSubListSize</c>).</summary>
    public const int DefaultSubscriptionListSize = 1024;

    public HttpResponse Subsz(QueryString query)
    {
        var reader = new QueryReader(query);
        var list = reader.Bool("subs");
        var offset = Math.Max(reader.Int("offset"), 0);
        var limit = reader.Int("limit");
        var test = reader.Text("test");
        var account = reader.Text("acc");
        if (reader.Error is { } error)
        {
            return BadRequest(error);
        }

        limit = limit <= 0 ? DefaultSubscriptionListSize : limit;
        var testBytes = Encoding.UTF8.GetBytes(test);
        if (test.Length > 0 && !SubjectValidator.IsValidLiteralSubject(testBytes))
        {
            return BadRequest("invalid test subject, must be valid publish subject: " + test);
        }

        var statistics = core.Accounts.Global.SubList.GetStatistics();
        var subsz = new Subsz
        {
            ServerId = core.ServerId,
            Now = DateTime.UtcNow,
            Offset = offset,
            Limit = limit,
        };

        // Statistics and list cover the global account only; an unknown account has nothing (nats-server skips it).
        if (account.Length == 0 || account == GlobalAccount)
        {
            subsz.CopyFrom(statistics);
            if (list)
            {
                var matching = core.Accounts.Global.SubList.Snapshot()
                    .Where(s => test.Length == 0 || SubjectValidator.MatchesPublished(s.Subject, testBytes));
                var details = ConnectionSnapshot.Details(matching, GlobalAccount);
                var start = Math.Min(offset, details.Length);
                subsz.Subscriptions = details[start..(start + Math.Min(limit, details.Length - start))];
                subsz.Total = details.Length;
            }
        }

        return HttpResponse.Json(MonitorJson.Serialize(subsz));
    }

    public HttpResponse Accountz(QueryString query)
    {
        var account = query.Get("acc");
        var accountz = new Accountz { ServerId = core.ServerId, Now = DateTime.UtcNow };
        if (account.Length == 0)
        {
            accountz.Accounts = [GlobalAccount];
        }
        else if (account == GlobalAccount)
        {
            var statistics = core.Accounts.Global.SubList.GetStatistics();
            var sublistStats = new SublistStats();
            sublistStats.CopyFrom(statistics);
            accountz.AccountDetail = new AccountInfo
            {
                AccountName = GlobalAccount,
                UpdateTime = core.StartedAt,
                ClientConnections = core.Clients.Count,
                Subscriptions = statistics.NumSubscriptions,
                SublistStats = sublistStats,
            };
        }
        else
        {
            return BadRequest($"Account {account} does not exist");
        }

        return HttpResponse.Json(MonitorJson.Serialize(accountz));
    }
}
