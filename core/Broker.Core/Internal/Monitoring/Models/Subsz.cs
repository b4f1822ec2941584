using System.Text.Json.Serialization;
using Broker.Core.Internal.Subscriptions;

namespace Broker.Core.Internal.Monitoring.Models;

/// <summary>
/// The <c>/subsz</c> answer: subject index statistics inline (Go embeds <c>SublistStats</c>, so the fields sit at the
/// top level), then the optional list (<c>monitor.go: Subsz</c>). The orders keep nats-server's field order.
/// </summary>
internal sealed class Subsz : SublistStats
{
    [JsonPropertyName("server_id")]
    [JsonPropertyOrder(-2)]
    public string ServerId { get; set; } = "";

    [JsonPropertyName("now")]
    [JsonPropertyOrder(-1)]
    public DateTime Now { get; set; }

    [JsonPropertyName("total")]
    [JsonPropertyOrder(1)]
    public int Total { get; set; }

    [JsonPropertyName("offset")]
    [JsonPropertyOrder(2)]
    public int Offset { get; set; }

    [JsonPropertyName("limit")]
    [JsonPropertyOrder(3)]
    public int Limit { get; set; }

    [JsonPropertyName("subscriptions_list")]
    [JsonPropertyOrder(4)]
    public IReadOnlyList<SubDetail>? Subscriptions { get; set; }
}

/// <summary>The subject index statistics object (<c>sublist.go: SublistStats</c>), as <c>/accountz</c> nests it.</summary>
internal class SublistStats
{
    [JsonPropertyName("num_subscriptions")]
    public int NumSubscriptions { get; set; }

    [JsonPropertyName("num_cache")]
    public int NumCache { get; set; }

    [JsonPropertyName("num_inserts")]
    public long NumInserts { get; set; }

    [JsonPropertyName("num_removes")]
    public long NumRemoves { get; set; }

    [JsonPropertyName("num_matches")]
    public long NumMatches { get; set; }

    [JsonPropertyName("cache_hit_rate")]
    public double CacheHitRate { get; set; }

    [JsonPropertyName("max_fanout")]
    public int MaxFanout { get; set; }

    [JsonPropertyName("avg_fanout")]
    public double AvgFanout { get; set; }

    // The raw figures behind the two rates, kept while adding up several indexes.
    private long cacheHits;
    private long totalFanout;
    private long cachedResults;

    /// <summary>Takes every field from the subject index's statistics.</summary>
    public void CopyFrom(in SubListStatistics statistics)
    {
        NumSubscriptions = statistics.NumSubscriptions;
        NumCache = statistics.NumCache;
        NumInserts = statistics.NumInserts;
        NumRemoves = statistics.NumRemoves;
        NumMatches = statistics.NumMatches;
        CacheHitRate = statistics.CacheHitRate;
        MaxFanout = statistics.MaxFanout;
        AvgFanout = statistics.AvgFanout;
        cacheHits = statistics.CacheHits;
        totalFanout = statistics.TotalFanout;
        cachedResults = statistics.CachedResults;
    }

    /// <summary>Takes every field, the raw figures included, from other statistics.</summary>
    public void CopyFrom(SublistStats other)
    {
        NumSubscriptions = other.NumSubscriptions;
        NumCache = other.NumCache;
        NumInserts = other.NumInserts;
        NumRemoves = other.NumRemoves;
        NumMatches = other.NumMatches;
        CacheHitRate = other.CacheHitRate;
        MaxFanout = other.MaxFanout;
        AvgFanout = other.AvgFanout;
        cacheHits = other.cacheHits;
        totalFanout = other.totalFanout;
        cachedResults = other.cachedResults;
    }

    /// <summary>
    /// Adds another index's statistics (one account's): counts add up, the maximum fan-out is the larger one, the
    /// rates are recomputed from the summed raw figures (nats-server <c>SublistStats.add</c>).
    /// </summary>
    public void Add(in SubListStatistics statistics)
    {
        NumSubscriptions += statistics.NumSubscriptions;
        NumCache += statistics.NumCache;
        NumInserts += statistics.NumInserts;
        NumRemoves += statistics.NumRemoves;
        NumMatches += statistics.NumMatches;
        MaxFanout = Math.Max(MaxFanout, statistics.MaxFanout);
        cacheHits += statistics.CacheHits;
        totalFanout += statistics.TotalFanout;
        cachedResults += statistics.CachedResults;
        if (totalFanout > 0)
        {
            AvgFanout = (double)totalFanout / cachedResults;
        }

        if (NumMatches > 0)
        {
            CacheHitRate = (double)cacheHits / NumMatches;
        }
    }
}
