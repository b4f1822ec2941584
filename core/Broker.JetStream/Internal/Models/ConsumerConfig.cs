using System.Text;
using System.Text.Json;
using System.Text.Json.Serialization;
using Broker.Abstractions;
using Broker.JetStream.Internal.Json;

namespace Broker.JetStream.Internal.Models;

/// <summary>
/// A consumer's configuration with nats-server's JSON names and order (<c>consumer.go ConsumerConfig</c>, 2.9), plus
/// 2.10's <c>filter_subjects</c> and <c>metadata</c>. Durations are nanoseconds.
/// </summary>
/// <remarks>
/// The settings most consumers leave at their defaults (pull limits, pacing, heartbeats, backoff, metadata, pause and
/// priority groups, ...) live in a side object made when one is set: an MQTT QoS 1 subscription's consumer sets none,
/// and ten thousand of them each held 235 B of configuration (issue 25). Setting a default value makes nothing.
/// </remarks>
internal sealed class ConsumerConfig
{
    private RareSettings? rare;

    // The deliver and filter subjects are held in UTF-8 only, what deliveries and matching use (shared with the push
    // front end and the stream cursor, never changed: a set replaces the array); the strings are made when read, by
    // the API and consumer info. Both forms were ~200 B of each MQTT QoS 1 consumer (issue 25).
    private byte[]? deliverSubject;
    private byte[]? filterSubject;

    [JsonPropertyName("durable_name")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)]
    public string? Durable { get; set; }

    [JsonPropertyName("name")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)]
    public string? Name { get; set; }

    [JsonPropertyName("description")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)]
    public string? Description
    {
        get => rare?.Description;
        set
        {
            if (RareFor(value is null) is { } r)
            {
                r.Description = value;
            }
        }
    }

    [JsonPropertyName("deliver_policy")]
    [JsonConverter(typeof(DeliverPolicyConverter))]
    public DeliverPolicy DeliverPolicy { get; set; }

    [JsonPropertyName("opt_start_seq")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)]
    public ulong OptStartSeq
    {
        get => rare?.OptStartSeq ?? default;
        set
        {
            if (RareFor(value == default) is { } r)
            {
                r.OptStartSeq = value;
            }
        }
    }

    [JsonPropertyName("opt_start_time")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    [JsonConverter(typeof(NullableGoTimeConverter))]
    public long? OptStartTime
    {
        get => rare?.OptStartTime;
        set
        {
            if (RareFor(value is null) is { } r)
            {
                r.OptStartTime = value;
            }
        }
    }

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
    public List<long>? BackOff
    {
        get => rare?.BackOff;
        set
        {
            if (RareFor(value is null) is { } r)
            {
                r.BackOff = value;
            }
        }
    }

    [JsonPropertyName("filter_subject")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)]
    public string? FilterSubject
    {
        get => filterSubject is null ? null : Encoding.UTF8.GetString(filterSubject);
        set => filterSubject = value is null ? null : Encoding.UTF8.GetBytes(value);
    }

    /// <summary><see cref="FilterSubject"/> in UTF-8, the one form held (the stream cursor matches with it; not to be changed).</summary>
    [JsonIgnore]
    public byte[]? FilterSubjectUtf8 => filterSubject;

    [JsonPropertyName("replay_policy")]
    [JsonConverter(typeof(ReplayPolicyConverter))]
    public ReplayPolicy ReplayPolicy { get; set; }

    [JsonPropertyName("rate_limit_bps")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)]
    public ulong RateLimit
    {
        get => rare?.RateLimit ?? default;
        set
        {
            if (RareFor(value == default) is { } r)
            {
                r.RateLimit = value;
            }
        }
    }

    [JsonPropertyName("sample_freq")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)]
    public string? SampleFrequency
    {
        get => rare?.SampleFrequency;
        set
        {
            if (RareFor(value is null) is { } r)
            {
                r.SampleFrequency = value;
            }
        }
    }

    [JsonPropertyName("max_waiting")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)]
    public int MaxWaiting
    {
        get => rare?.MaxWaiting ?? default;
        set
        {
            if (RareFor(value == default) is { } r)
            {
                r.MaxWaiting = value;
            }
        }
    }

    [JsonPropertyName("max_ack_pending")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)]
    public int MaxAckPending { get; set; }

    [JsonPropertyName("idle_heartbeat")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)]
    public long Heartbeat
    {
        get => rare?.Heartbeat ?? default;
        set
        {
            if (RareFor(value == default) is { } r)
            {
                r.Heartbeat = value;
            }
        }
    }

    [JsonPropertyName("flow_control")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)]
    public bool FlowControl
    {
        get => rare?.FlowControl ?? default;
        set
        {
            if (RareFor(!value) is { } r)
            {
                r.FlowControl = value;
            }
        }
    }

    [JsonPropertyName("headers_only")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)]
    public bool HeadersOnly
    {
        get => rare?.HeadersOnly ?? default;
        set
        {
            if (RareFor(!value) is { } r)
            {
                r.HeadersOnly = value;
            }
        }
    }

    [JsonPropertyName("max_batch")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)]
    public int MaxRequestBatch
    {
        get => rare?.MaxRequestBatch ?? default;
        set
        {
            if (RareFor(value == default) is { } r)
            {
                r.MaxRequestBatch = value;
            }
        }
    }

    [JsonPropertyName("max_expires")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)]
    public long MaxRequestExpires
    {
        get => rare?.MaxRequestExpires ?? default;
        set
        {
            if (RareFor(value == default) is { } r)
            {
                r.MaxRequestExpires = value;
            }
        }
    }

    [JsonPropertyName("max_bytes")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)]
    public int MaxRequestMaxBytes
    {
        get => rare?.MaxRequestMaxBytes ?? default;
        set
        {
            if (RareFor(value == default) is { } r)
            {
                r.MaxRequestMaxBytes = value;
            }
        }
    }

    [JsonPropertyName("deliver_subject")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)]
    public string? DeliverSubject
    {
        get => deliverSubject is null ? null : Encoding.UTF8.GetString(deliverSubject);
        set => deliverSubject = value is null ? null : Encoding.UTF8.GetBytes(value);
    }

    /// <summary><see cref="DeliverSubject"/> in UTF-8, the one form held (push deliveries go to it; not to be changed).</summary>
    [JsonIgnore]
    public byte[]? DeliverSubjectUtf8 => deliverSubject;

    [JsonPropertyName("deliver_group")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)]
    public string? DeliverGroup
    {
        get => rare?.DeliverGroup;
        set
        {
            if (RareFor(value is null) is { } r)
            {
                r.DeliverGroup = value;
            }
        }
    }

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
    public bool Direct
    {
        get => rare?.Direct ?? default;
        set
        {
            if (RareFor(!value) is { } r)
            {
                r.Direct = value;
            }
        }
    }

    [JsonPropertyName("filter_subjects")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    public List<string>? FilterSubjects
    {
        get => rare?.FilterSubjects;
        set
        {
            if (RareFor(value is null) is { } r)
            {
                r.FilterSubjects = value;
            }
        }
    }

    [JsonPropertyName("metadata")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    public Dictionary<string, string>? Metadata
    {
        get => rare?.Metadata;
        set
        {
            if (RareFor(value is null) is { } r)
            {
                r.Metadata = value;
            }
        }
    }

    /// <summary>
    /// 2.11 <c>pause_until</c> (ns since the Unix epoch, UTC): no deliveries before it. Set on create and by
    /// <c>$JS.API.CONSUMER.PAUSE</c>; an update through create keeps the running consumer's. Null when never set;
    /// 0 is Go's zero time (written back as nats-server does).
    /// </summary>
    [JsonPropertyName("pause_until")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    [JsonConverter(typeof(NullableGoTimeConverter))]
    public long? PauseUntil
    {
        get => rare?.PauseUntil;
        set
        {
            if (RareFor(value is null) is { } r)
            {
                r.PauseUntil = value;
            }
        }
    }

    /// <summary>
    /// 2.11 <c>priority_groups</c>: the groups pull requests name (one is used, as in nats-server 2.11); written only when
    /// there are some.
    /// </summary>
    [JsonPropertyName("priority_groups")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    public List<string>? PriorityGroups
    {
        get => rare?.PriorityGroups;
        set
        {
            if (RareFor(value is null) is { } r)
            {
                r.PriorityGroups = value;
            }
        }
    }

    /// <summary>2.11 <c>priority_policy</c>: <c>none</c> (the default, not written), <c>overflow</c> or <c>pinned_client</c>.</summary>
    [JsonPropertyName("priority_policy")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)]
    [JsonConverter(typeof(PriorityPolicyConverter))]
    public PriorityPolicy PriorityPolicy
    {
        get => rare?.PriorityPolicy ?? default;
        set
        {
            if (RareFor(value == default) is { } r)
            {
                r.PriorityPolicy = value;
            }
        }
    }

    /// <summary>2.11 <c>priority_timeout</c> (nats-server's <c>PinnedTTL</c>, ns): how long a pin lasts without a pull; 2 minutes by default under <c>pinned_client</c>.</summary>
    [JsonPropertyName("priority_timeout")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)]
    public long PriorityTimeout
    {
        get => rare?.PriorityTimeout ?? default;
        set
        {
            if (RareFor(value == default) is { } r)
            {
                r.PriorityTimeout = value;
            }
        }
    }

    [JsonIgnore]
    public bool IsPush => deliverSubject is { Length: > 0 };

    [JsonIgnore]
    public bool IsDurable => !string.IsNullOrEmpty(Durable);

    public ConsumerConfig Clone()
    {
        var copy = (ConsumerConfig)MemberwiseClone();
        copy.rare = rare?.Clone();
        copy.BackOff = BackOff is null ? null : [.. BackOff];
        copy.FilterSubjects = FilterSubjects is null ? null : [.. FilterSubjects];
        copy.PriorityGroups = PriorityGroups is null ? null : [.. PriorityGroups];
        copy.Metadata = Metadata is null ? null : new Dictionary<string, string>(Metadata);
        return copy;
    }

    public string ToJson() => ConsumerJson.ToJson(this);

    /// <summary>The side object to set a rare setting on: null when the value is the default and none was set before.</summary>
    private RareSettings? RareFor(bool isDefault) => isDefault && rare is null ? null : rare ??= new RareSettings();

    /// <summary>The settings kept apart (see the remarks); fields, copied whole by <see cref="Clone"/>.</summary>
    private sealed class RareSettings
    {
        public string? Description;
        public ulong OptStartSeq;
        public long? OptStartTime;
        public List<long>? BackOff;
        public ulong RateLimit;
        public string? SampleFrequency;
        public int MaxWaiting;
        public long Heartbeat;
        public bool FlowControl;
        public bool HeadersOnly;
        public int MaxRequestBatch;
        public long MaxRequestExpires;
        public int MaxRequestMaxBytes;
        public string? DeliverGroup;
        public bool Direct;
        public List<string>? FilterSubjects;
        public Dictionary<string, string>? Metadata;
        public long? PauseUntil;
        public List<string>? PriorityGroups;
        public PriorityPolicy PriorityPolicy;
        public long PriorityTimeout;

        public RareSettings Clone() => (RareSettings)MemberwiseClone();
    }
}
