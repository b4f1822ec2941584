using System.Diagnostics.Metrics;
using System.Net;
using Broker.Core.Internal.Protocol;

namespace Broker.Core.Internal.Monitoring.Metrics;

/// <summary>
/// Every metric the broker publishes. The numbers are the ones /varz, /connz and /subsz report, read from the same
/// counters (<see cref="ServerStatistics"/>, the subject index, the listeners).
/// </summary>
internal sealed partial class BrokerMetrics
{
    private List<MetricDefinition> CreateDefinitions()
    {
        var statistics = core.Statistics;
        return
        [
            Gauge("broker_info", "broker.info", "1", "Broker identity in labels; the value is always 1.", Info),
            Gauge("broker_start_time_seconds", "broker.start_time", "s", "When the broker started, in seconds since the Unix epoch.",
                () => One((core.StartedAt - DateTime.UnixEpoch).TotalSeconds)),
            Gauge("broker_uptime_seconds", "broker.uptime", "s", "Seconds since the broker started.",
                () => One((DateTime.UtcNow - core.StartedAt).TotalSeconds)),
            Gauge("broker_lame_duck", "broker.lame_duck", "1", "1 while the broker is in lame duck mode, otherwise 0.",
                () => One(core.RunState == BrokerRunState.LameDuck ? 1 : 0)),
            Gauge("broker_connections", "broker.connections", "{connection}", "Client connections open now (/varz connections).",
                () => One(core.Clients.Count)),
            Counter("broker_connections_accepted_total", "broker.connections.accepted", "{connection}", "Client connections accepted since start (/varz total_connections).",
                () => One(Interlocked.Read(ref statistics.TotalConnections))),
            Gauge("broker_subscriptions", "broker.subscriptions", "{subscription}", "Subscriptions held now, in-process ones included (/varz subscriptions).",
                () => One(core.Accounts.SubscriptionCount())),
            Counter("broker_messages_received_total", "broker.messages.received", "{message}", "Messages published to the broker (/varz in_msgs).",
                () => One(Interlocked.Read(ref statistics.InMessages))),
            Counter("broker_messages_sent_total", "broker.messages.sent", "{message}", "Messages delivered to subscribers (/varz out_msgs).",
                () => One(Interlocked.Read(ref statistics.OutMessages))),
            Counter("broker_bytes_received_total", "broker.bytes.received", "By", "Payload and header bytes published (/varz in_bytes).",
                () => One(Interlocked.Read(ref statistics.InBytes))),
            Counter("broker_bytes_sent_total", "broker.bytes.sent", "By", "Payload and header bytes delivered (/varz out_bytes).",
                () => One(Interlocked.Read(ref statistics.OutBytes))),
            Counter("broker_slow_consumers_total", "broker.slow_consumers", "{connection}", "Connections closed as slow consumers (/varz slow_consumers).",
                () => One(Interlocked.Read(ref statistics.SlowConsumers))),
            Counter("broker_stale_connections_total", "broker.stale_connections", "{connection}", "Connections closed as stale (/varz stale_connections).",
                () => One(Interlocked.Read(ref statistics.StaleConnections))),
            Counter("broker_subscription_matches_total", "broker.subscriptions.matches", "{match}", "Subject index lookups (/subsz num_matches).",
                () => One(core.Accounts.Sum(static l => l.NumMatches))),
            Counter("broker_subscription_cache_hits_total", "broker.subscriptions.cache.hits", "{match}", "Subject index lookups answered from the match cache.",
                () => One(core.Accounts.Sum(static l => l.CacheHits))),
            Gauge("broker_subscription_cache_entries", "broker.subscriptions.cache.entries", "{entry}", "Entries in the subject index match cache (/subsz num_cache).",
                () => One(core.Accounts.Sum(static l => l.CacheCount))),
            Gauge("broker_process_resident_memory_bytes", "broker.process.memory.resident", "By", "Resident memory of the process (/varz mem).",
                () => One(ProcessUsage.ResidentBytes)),
            Gauge("broker_process_managed_heap_bytes", "broker.process.memory.managed", "By", "Bytes allocated on the managed heap.",
                () => One(GC.GetTotalMemory(forceFullCollection: false))),
            Counter("broker_process_cpu_seconds_total", "broker.process.cpu.time", "s", "CPU time used by the process, user and kernel.",
                () => One(ProcessUsage.CpuTime.TotalSeconds)),
            Gauge("broker_process_cpu_percent", "broker.process.cpu.utilization", "%", "CPU use over the last second, 100 per busy core (/varz cpu).",
                () => One(Process.CpuPercent())),
            Gauge("broker_listener_up", "broker.listener.up", "1", "1 for each listener accepting connections, 0 once it stopped accepting.", ListenersUp),
            Gauge("broker_listener_connections", "broker.listener.connections", "{connection}", "Connections being served, per listener.", ListenerConnections),
            Gauge("broker_account_connections", "broker.account.connections", "{connection}", "Client connections open now, per account (/accountz client_connections).", AccountConnections),
            Gauge("broker_account_subscriptions", "broker.account.subscriptions", "{subscription}", "Subscriptions held now, per account (/accountz subscriptions).", AccountSubscriptions),
            Counter("broker_http_requests_total", "broker.http.requests", "{request}", "Monitoring requests per endpoint (/varz http_req_stats).", HttpRequestCounts),
        ];
    }

    private static MetricDefinition Gauge(string name, string instrument, string unit, string help, Func<IEnumerable<Measurement<double>>> observe)
        => new(name, instrument, unit, help, MetricType.Gauge, observe);

    private static MetricDefinition Counter(string name, string instrument, string unit, string help, Func<IEnumerable<Measurement<double>>> observe)
        => new(name, instrument, unit, help, MetricType.Counter, observe);

    private static Measurement<double>[] One(double value) => [new(value)];

    private IEnumerable<Measurement<double>> Info() =>
    [
        new(1,
            new KeyValuePair<string, object?>("version", BrokerServer.Version),
            new KeyValuePair<string, object?>("nats_version", ServerInfo.CompatibleServerVersion),
            new KeyValuePair<string, object?>("server_id", core.ServerId),
            new KeyValuePair<string, object?>("server_name", core.ServerName)),
    ];

    private IEnumerable<Measurement<double>> ListenersUp()
    {
        foreach (var listener in core.Listeners)
        {
            var definition = listener.Definition;
            yield return new(
                listener.IsAccepting ? 1 : 0,
                new KeyValuePair<string, object?>("listener", definition.Name),
                new KeyValuePair<string, object?>("protocol", definition.Protocol),
                new KeyValuePair<string, object?>("transport", definition.Transport),
                new KeyValuePair<string, object?>("endpoint", FormatEndPoint(listener.EndPoint)));
        }
    }

    private IEnumerable<Measurement<double>> ListenerConnections()
    {
        foreach (var listener in core.Listeners)
        {
            yield return new(listener.ActiveConnections, new KeyValuePair<string, object?>("listener", listener.Definition.Name));
        }
    }

    private IEnumerable<Measurement<double>> AccountSubscriptions()
    {
        foreach (var account in core.Accounts.All)
        {
            yield return new(account.SubList.Count, new KeyValuePair<string, object?>("account", account.Name));
        }
    }

    /// <summary>
    /// Connections per account as /accountz counts them. An account other than <c>$G</c> has the count its
    /// <c>max_connections</c> is checked against (its connections once bound); <c>$G</c> also holds the connections
    /// still authenticating, so it is counted in one pass over the clients. Nothing is allocated but the samples.
    /// </summary>
    private IEnumerable<Measurement<double>> AccountConnections()
    {
        var global = 0;
        foreach (var (_, client) in core.Clients)
        {
            if (client is Clients.IClientConnection && client.Account.IsGlobal)
            {
                global++;
            }
        }

        foreach (var account in core.Accounts.All)
        {
            yield return new(account.IsGlobal ? global : account.Connections, new KeyValuePair<string, object?>("account", account.Name));
        }
    }

    private IEnumerable<Measurement<double>> HttpRequestCounts()
    {
        foreach (var (path, count) in HttpRequests.Snapshot())
        {
            yield return new(count, new KeyValuePair<string, object?>("path", path));
        }
    }

    private static string FormatEndPoint(EndPoint endPoint) => endPoint.ToString() ?? string.Empty;
}
