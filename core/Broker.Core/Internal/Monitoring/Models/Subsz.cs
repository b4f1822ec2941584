using System.Text.Json.Serialization;

namespace Broker.Core.Internal.Monitoring.Models;

/// <summary>The <c>/subsz</c> answer: subject index statistics inline, then the optional list (<c>monitor.go: Subsz</c>).</summary>
internal sealed class Subsz
{
    [JsonPropertyName("server_id")]
    public string ServerId { get; set; } = "";

    [JsonPropertyName("now")]
    public DateTime Now { get; set; }

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

    [JsonPropertyName("total")]
    public int Total { get; set; }

    [JsonPropertyName("offset")]
    public int Offset { get; set; }

    [JsonPropertyName("limit")]
    public int Limit { get; set; }

    [JsonPropertyName("subscriptions_list")]
    public IReadOnlyList<SubDetail>? Subscriptions { get; set; }
}

/// <summary>The subject index statistics object (<c>sublist.go: SublistStats</c>), as <c>/accountz</c> nests it.</summary>
internal sealed class SublistStats
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
}
