namespace Broker.Core.Internal.Monitoring;

/// <summary>Requests served per endpoint since start (/varz <c>http_req_stats</c>, /metrics).</summary>
internal sealed class HttpRequestStatistics
{
    private readonly System.Collections.Concurrent.ConcurrentDictionary<string, long> counts = new(StringComparer.Ordinal);

    public void Increment(string path) => counts.AddOrUpdate(path, 1, static (_, count) => count + 1);

    public IReadOnlyDictionary<string, long> Snapshot() => new SortedDictionary<string, long>(counts, StringComparer.Ordinal);
}
