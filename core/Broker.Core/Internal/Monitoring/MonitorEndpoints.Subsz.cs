using System.Text;
using Broker.Core.Internal.Accounts;
using Broker.Core.Internal.Monitoring.Http;
using Broker.Core.Internal.Monitoring.Models;
using Broker.Core.Internal.Subscriptions;

namespace Broker.Core.Internal.Monitoring;

/// <summary>/subsz (alias /subscriptionsz): the accounts' subject indexes, together or one account's.</summary>
internal sealed partial class MonitorEndpoints
{
    /// <summary>Subscriptions listed when no limit is asked for (nats-server's <c>DefaultSubListSize</c>).</summary>
    public const int DefaultSubscriptionListSize = 1024;

    /// <summary>
    /// Statistics of every account's index added up (nats-server <c>SublistStats.add</c>), or of the one named by
    /// <c>acc</c>; an unknown account has nothing. The list (<c>subs</c>) names each subscription's account, and its
    /// <c>total</c> is the length of the page, as nats-server 2.9.10 sets it; with no subscription on the page the
    /// answer is the statistics alone, without <c>server_id</c>, <c>now</c> or paging, as nats-server writes it.
    /// </summary>
    public HttpResponse Subsz(QueryString query) => Subsz(query, statisticsAloneWhenEmpty: true);

    /// <summary>
    /// /subsz, or with <paramref name="statisticsAloneWhenEmpty"/> false the whole <c>Subsz</c> even with no subscription
    /// on the page, as nats-server's <c>$SYS</c> SUBSZ answers (its HTTP handler is the one that shortens it).
    /// </summary>
    public HttpResponse Subsz(QueryString query, bool statisticsAloneWhenEmpty)
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

        var accounts = SelectedAccounts(account);
        var statistics = new SublistStats();
        foreach (var selected in accounts)
        {
            statistics.Add(selected.SubList.GetStatistics());
        }

        SubDetail[] page = [];
        if (list)
        {
            var matching = accounts
                .SelectMany(a => a.SubList.Snapshot())
                .Where(s => test.Length == 0 || SubjectValidator.MatchesPublished(s.Subject, testBytes));
            var details = ConnectionSnapshot.Details(matching, withAccount: true);
            var start = Math.Min(offset, details.Length);
            page = details[start..(start + Math.Min(limit, details.Length - start))];
        }

        // nats-server writes only the statistics when there is no subscription to list (asked for or not).
        if (page.Length == 0 && statisticsAloneWhenEmpty)
        {
            return HttpResponse.Json(MonitorJson.Serialize(statistics));
        }

        var subsz = new Subsz
        {
            ServerId = core.ServerId,
            Now = DateTime.UtcNow,
            Offset = offset,
            Limit = limit,
            Total = page.Length,
            Subscriptions = page.Length == 0 ? null : page,
        };
        subsz.CopyFrom(statistics);
        return HttpResponse.Json(MonitorJson.Serialize(subsz));
    }

    /// <summary>Every account for an empty name, the named one if it exists, none otherwise.</summary>
    private Account[] SelectedAccounts(string name)
    {
        if (name.Length == 0)
        {
            return [.. core.Accounts.All];
        }

        return core.Accounts.TryGet(name, out var account) ? [account] : [];
    }
}
