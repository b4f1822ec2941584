using System.Text.Json;
using System.Text.Json.Serialization;
using Broker.Abstractions;
using Broker.JetStream.Internal.Json;

namespace Broker.JetStream.Internal.Models;

/// <summary>
/// A consumer's configuration with nats-server's JSON names and order (<c>consumer.go ConsumerConfig</c>, 2.9), plus
/// 2.10's <c>filter_subjects</c> and <c>metadata</c>. Durations are nanoseconds.
/// </summary>
internal sealed class ConsumerConfig
{
    [JsonPropertyName("durable_name")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)]
    public string? Durable { get; set; }

    [JsonPropertyName("name")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)]
    public string? Name { get; set; }

    [JsonPropertyName("description")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)]
    public string? Description { get; set; }

    [JsonPropertyName("deliver_policy")]
    [JsonConverter(typeof(DeliverPolicyConverter))]
    public DeliverPolicy DeliverPolicy { get; set; }

    [JsonPropertyName("opt_start_seq")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)]
    public ulong OptStartSeq { get; set; }

    [JsonPropertyName("opt_start_time")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    [JsonConverter(typeof(NullableGoTimeConverter))]
    public long? OptStartTime { get; set; }

    [JsonPropertyName("ack_policy")]
    [JsonConverter(typeof(AckPolicyConverter))]
    public ConsumerAckPolicy AckPolicy { get; set; } = ConsumerAckPolicy.None;

    [JsonPropertyName("ack_wait")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)]
    public long AckWait { get; set; }

    [JsonPropertyName("max_deliver")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)]
    public int MaxDeliver { get; set; }

    [JsonPropertyName("backoff")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    public List<long>? BackOff { get; set; }

    [JsonPropertyName("filter_subject")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)]
    public string? FilterSubject { get; set; }

    [JsonPropertyName("replay_policy")]
    [JsonConverter(typeof(ReplayPolicyConverter))]
    public ReplayPolicy ReplayPolicy { get; set; }

    [JsonPropertyName("rate_limit_bps")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)]
    public ulong RateLimit { get; set; }

    [JsonPropertyName("sample_freq")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)]
    public string? SampleFrequency { get; set; }

    [JsonPropertyName("max_waiting")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)]
    public int MaxWaiting { get; set; }

    [JsonPropertyName("max_ack_pending")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)]
    public int MaxAckPending { get; set; }

    [JsonPropertyName("idle_heartbeat")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)]
    public long Heartbeat { get; set; }

    [JsonPropertyName("flow_control")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)]
    public bool FlowControl { get; set; }

    [JsonPropertyName("headers_only")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)]
    public bool HeadersOnly { get; set; }

    [JsonPropertyName("max_batch")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)]
    public int MaxRequestBatch { get; set; }

    [JsonPropertyName("max_expires")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)]
    public long MaxRequestExpires { get; set; }

    [JsonPropertyName("max_bytes")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)]
    public int MaxRequestMaxBytes { get; set; }

    [JsonPropertyName("deliver_subject")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)]
    public string? DeliverSubject { get; set; }

    [JsonPropertyName("deliver_group")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)]
    public string? DeliverGroup { get; set; }

    [JsonPropertyName("inactive_threshold")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)]
    public long InactiveThreshold { get; set; }

    [JsonPropertyName("num_replicas")]
    public int Replicas { get; set; }

    [JsonPropertyName("mem_storage")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)]
    public bool MemoryStorage { get; set; }

    [JsonPropertyName("direct")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)]
    public bool Direct { get; set; }

    [JsonPropertyName("filter_subjects")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    public List<string>? FilterSubjects { get; set; }

    [JsonPropertyName("metadata")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    public Dictionary<string, string>? Metadata { get; set; }

    /// <summary>
    /// 2.11 <c>pause_until</c> (ns since the Unix epoch, UTC): no deliveries before it. Set on create and by
    /// <c>$JS.API.CONSUMER.PAUSE</c>; an update through create keeps the running consumer's. Null when never set;
    /// 0 is Go's zero time (written back as nats-server does).
    /// </summary>
    [JsonPropertyName("pause_until")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    [JsonConverter(typeof(NullableGoTimeConverter))]
    public long? PauseUntil { get; set; }

    /// <summary>
    /// 2.11 <c>priority_groups</c>: the groups pull requests name (one is used, as in nats-server 2.11); written only when
    /// there are some.
    /// </summary>
    [JsonPropertyName("priority_groups")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    public List<string>? PriorityGroups { get; set; }

    /// <summary>2.11 <c>priority_policy</c>: <c>none</c> (the default, not written), <c>overflow</c> or <c>pinned_client</c>.</summary>
    [JsonPropertyName("priority_policy")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)]
    [JsonConverter(typeof(PriorityPolicyConverter))]
    public PriorityPolicy PriorityPolicy { get; set; }

    /// <summary>2.11 <c>priority_timeout</c> (nats-server's <c>PinnedTTL</c>, ns): how long a pin lasts without a pull; 2 minutes by default under <c>pinned_client</c>.</summary>
    [JsonPropertyName("priority_timeout")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)]
    public long PriorityTimeout { get; set; }

    [JsonIgnore]
    public bool IsPush => !string.IsNullOrEmpty(DeliverSubject);

    [JsonIgnore]
    public bool IsDurable => !string.IsNullOrEmpty(Durable);

    public ConsumerConfig Clone()
    {
        var copy = (ConsumerConfig)MemberwiseClone();
        copy.BackOff = BackOff is null ? null : [.. BackOff];
        copy.FilterSubjects = FilterSubjects is null ? null : [.. FilterSubjects];
        copy.PriorityGroups = PriorityGroups is null ? null : [.. PriorityGroups];
        copy.Metadata = Metadata is null ? null : new Dictionary<string, string>(Metadata);
        return copy;
    }

    public string ToJson() => JsonSerializer.Serialize(this, JetStreamJson.Context.ConsumerConfig);
}
