using System.Text.Json;
using System.Text.Json.Serialization;
using Broker.Abstractions;
using Broker.JetStream.Internal.Json;

namespace Broker.JetStream.Internal.Models;

/// <summary>
/// A stream's configuration with nats-server's JSON field names and order (<c>stream.go StreamConfig</c>, 2.9), plus
/// 2.10's <c>metadata</c>, <c>first_seq</c> and <c>subject_transform</c>. Durations are nanoseconds. Fields of features
/// this broker does not have (the later versions' fields below) are read so a request using them can be refused by name.
/// </summary>
internal sealed class StreamConfig
{
    [JsonPropertyName("name")]
    public string Name { get; set; } = "";

    [JsonPropertyName("description")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)]
    public string? Description { get; set; }

    [JsonPropertyName("subjects")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)]
    public List<string>? Subjects { get; set; }

    [JsonPropertyName("retention")]
    [JsonConverter(typeof(RetentionConverter))]
    public RetentionPolicy Retention { get; set; }

    [JsonPropertyName("max_consumers")]
    public int MaxConsumers { get; set; }

    [JsonPropertyName("max_msgs")]
    public long MaxMsgs { get; set; }

    [JsonPropertyName("max_bytes")]
    public long MaxBytes { get; set; }

    [JsonPropertyName("max_age")]
    public long MaxAge { get; set; }

    [JsonPropertyName("max_msgs_per_subject")]
    public long MaxMsgsPerSubject { get; set; }

    [JsonPropertyName("max_msg_size")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)]
    public int MaxMsgSize { get; set; }

    [JsonPropertyName("discard")]
    [JsonConverter(typeof(DiscardConverter))]
    public DiscardPolicy Discard { get; set; }

    /// <summary>The storage type name; empty in a request means nats-server's default, <c>file</c>.</summary>
    [JsonPropertyName("storage")]
    public string Storage { get; set; } = "";

    [JsonPropertyName("num_replicas")]
    public int Replicas { get; set; }

    [JsonPropertyName("no_ack")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)]
    public bool NoAck { get; set; }

    [JsonPropertyName("template_owner")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)]
    public string? TemplateOwner { get; set; }

    [JsonPropertyName("duplicate_window")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)]
    public long DuplicateWindow { get; set; }

    [JsonPropertyName("placement")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    public JsonElement? Placement { get; set; }

    [JsonPropertyName("mirror")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    public StreamSourceConfig? Mirror { get; set; }

    [JsonPropertyName("sources")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    public List<StreamSourceConfig>? Sources { get; set; }

    [JsonPropertyName("republish")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    public RePublishConfig? RePublish { get; set; }

    /// <summary>2.10 <c>subject_transform</c>: the subject a message is stored under.</summary>
    [JsonPropertyName("subject_transform")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    public SubjectTransformConfig? SubjectTransform { get; set; }

    [JsonPropertyName("allow_direct")]
    public bool AllowDirect { get; set; }

    [JsonPropertyName("mirror_direct")]
    public bool MirrorDirect { get; set; }

    [JsonPropertyName("discard_new_per_subject")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)]
    public bool DiscardNewPerSubject { get; set; }

    [JsonPropertyName("sealed")]
    public bool Sealed { get; set; }

    [JsonPropertyName("deny_delete")]
    public bool DenyDelete { get; set; }

    [JsonPropertyName("deny_purge")]
    public bool DenyPurge { get; set; }

    [JsonPropertyName("allow_rollup_hdrs")]
    public bool AllowRollup { get; set; }

    [JsonPropertyName("first_seq")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)]
    public ulong FirstSeq { get; set; }

    [JsonPropertyName("metadata")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    public Dictionary<string, string>? Metadata { get; set; }

    // Fields of later nats-server versions this broker does not implement: read so that a value other than the
    // default is refused (UnsupportedFields) instead of dropped; never written, as they only ever hold the default.

    /// <summary>2.10 <c>compression</c>: <c>none</c> (or absent, not echoed) or <c>s2</c> (the file store compresses sealed blocks; memory streams keep it as a setting, as nats-server's memory store).</summary>
    [JsonPropertyName("compression")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    public string? Compression { get; set; }

    /// <summary>2.10 <c>consumer_limits</c> (defaults and limits for the stream's consumers).</summary>
    [JsonPropertyName("consumer_limits")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    public JsonElement? ConsumerLimits { get; set; }

    /// <summary>2.11 <c>allow_msg_ttl</c>: messages may carry a <c>Nats-TTL</c> header (written when true; can be turned on by an update, not off).</summary>
    [JsonPropertyName("allow_msg_ttl")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)]
    public bool AllowMsgTtl { get; set; }

    /// <summary>2.11 <c>subject_delete_marker_ttl</c> (nanoseconds).</summary>
    [JsonPropertyName("subject_delete_marker_ttl")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)]
    public long SubjectDeleteMarkerTtl { get; set; }

    /// <summary>2.12 <c>allow_msg_counter</c> (counter CRDT streams).</summary>
    [JsonPropertyName("allow_msg_counter")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)]
    public bool AllowMsgCounter { get; set; }

    /// <summary>2.12 <c>allow_atomic</c> (atomic batch publish).</summary>
    [JsonPropertyName("allow_atomic")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)]
    public bool AllowAtomic { get; set; }

    /// <summary>2.12 <c>allow_msg_schedules</c> (scheduled messages).</summary>
    [JsonPropertyName("allow_msg_schedules")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)]
    public bool AllowMsgSchedules { get; set; }

    /// <summary>2.12 <c>persist_mode</c>: <c>default</c> (or absent) is accepted, <c>async</c> refused.</summary>
    [JsonPropertyName("persist_mode")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    public string? PersistMode { get; set; }

    /// <summary>2.14 <c>allow_batched</c> (fast batch publish).</summary>
    [JsonPropertyName("allow_batched")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)]
    public bool AllowBatched { get; set; }

    public StreamConfig Clone()
    {
        var copy = (StreamConfig)MemberwiseClone();
        copy.Subjects = Subjects is null ? null : [.. Subjects];
        copy.Metadata = Metadata is null ? null : new Dictionary<string, string>(Metadata);
        copy.Mirror = Mirror?.Clone();
        copy.Sources = Sources?.ConvertAll(static source => source.Clone());
        return copy;
    }

    /// <summary>Whether two (normalised) configurations are the same, as nats-server's <c>reflect.DeepEqual</c> decides re-creates.</summary>
    public bool SameAs(StreamConfig other) =>
        JsonSerializer.Serialize(this, JetStreamJson.Context.StreamConfig) == JsonSerializer.Serialize(other, JetStreamJson.Context.StreamConfig);
}
