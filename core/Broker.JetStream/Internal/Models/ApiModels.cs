using System.Text.Json.Serialization;
using Broker.JetStream.Internal.Json;

namespace Broker.JetStream.Internal.Models;

/// <summary>An API error (<c>jetstream_errors.go ApiError</c>): HTTP-like code, JetStream code, description.</summary>
internal sealed record ApiError(
    [property: JsonPropertyName("code")] int Code,
    [property: JsonPropertyName("err_code")] ushort ErrorCode,
    [property: JsonPropertyName("description")] string Description);

/// <summary>The <c>{"total","offset","limit"}</c> block of paged responses.</summary>
internal sealed record ApiPaged(
    [property: JsonPropertyName("total")] int Total,
    [property: JsonPropertyName("offset")] int Offset,
    [property: JsonPropertyName("limit")] int Limit);

/// <summary>A stream's state as the API reports it (<c>StreamState</c>).</summary>
internal sealed class StreamStateModel
{
    [JsonPropertyName("messages")]
    public ulong Messages { get; set; }

    [JsonPropertyName("bytes")]
    public ulong Bytes { get; set; }

    [JsonPropertyName("first_seq")]
    public ulong FirstSeq { get; set; }

    [JsonPropertyName("first_ts")]
    [JsonConverter(typeof(GoTimeConverter))]
    public long FirstTime { get; set; }

    [JsonPropertyName("last_seq")]
    public ulong LastSeq { get; set; }

    [JsonPropertyName("last_ts")]
    [JsonConverter(typeof(GoTimeConverter))]
    public long LastTime { get; set; }

    [JsonPropertyName("num_subjects")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)]
    public int NumSubjects { get; set; }

    [JsonPropertyName("subjects")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    public Dictionary<string, ulong>? Subjects { get; set; }

    [JsonPropertyName("num_deleted")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)]
    public int NumDeleted { get; set; }

    [JsonPropertyName("deleted")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    public List<ulong>? Deleted { get; set; }

    [JsonPropertyName("consumer_count")]
    public int Consumers { get; set; }
}

/// <summary><c>StreamInfo</c>: configuration, creation time, state.</summary>
internal sealed class StreamInfoModel
{
    [JsonPropertyName("config")]
    public required StreamConfig Config { get; set; }

    [JsonPropertyName("created")]
    [JsonConverter(typeof(GoTimeConverter))]
    public long Created { get; set; }

    [JsonPropertyName("state")]
    public required StreamStateModel State { get; set; }

    [JsonPropertyName("domain")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)]
    public string? Domain { get; set; }

    [JsonPropertyName("mirror")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    public StreamSourceInfoModel? Mirror { get; set; }

    [JsonPropertyName("sources")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    public List<StreamSourceInfoModel>? Sources { get; set; }
}

/// <summary>A consumer's delivered or ack-floor position (<c>SequenceInfo</c>).</summary>
internal sealed class SequenceInfo
{
    [JsonPropertyName("consumer_seq")]
    public ulong Consumer { get; set; }

    [JsonPropertyName("stream_seq")]
    public ulong Stream { get; set; }

    [JsonPropertyName("last_active")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    [JsonConverter(typeof(NullableGoTimeConverter))]
    public long? LastActive { get; set; }
}

/// <summary><c>ConsumerInfo</c>.</summary>
internal sealed class ConsumerInfoModel
{
    [JsonPropertyName("stream_name")]
    public string Stream { get; set; } = "";

    [JsonPropertyName("name")]
    public string Name { get; set; } = "";

    [JsonPropertyName("created")]
    [JsonConverter(typeof(GoTimeConverter))]
    public long Created { get; set; }

    [JsonPropertyName("config")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    public ConsumerConfig? Config { get; set; }

    [JsonPropertyName("delivered")]
    public SequenceInfo Delivered { get; set; } = new();

    [JsonPropertyName("ack_floor")]
    public SequenceInfo AckFloor { get; set; } = new();

    [JsonPropertyName("num_ack_pending")]
    public int NumAckPending { get; set; }

    [JsonPropertyName("num_redelivered")]
    public int NumRedelivered { get; set; }

    [JsonPropertyName("num_waiting")]
    public int NumWaiting { get; set; }

    [JsonPropertyName("num_pending")]
    public ulong NumPending { get; set; }

    [JsonPropertyName("push_bound")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)]
    public bool PushBound { get; set; }

    /// <summary>2.11: whether the consumer is paused now.</summary>
    [JsonPropertyName("paused")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)]
    public bool Paused { get; set; }

    /// <summary>2.11: how long the pause still lasts (ns).</summary>
    [JsonPropertyName("pause_remaining")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)]
    public long PauseRemaining { get; set; }

    /// <summary>2.11: the priority group's state (its pin), for a consumer with groups.</summary>
    [JsonPropertyName("priority_groups")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    public List<PriorityGroupState>? PriorityGroups { get; set; }
}

/// <summary>2.11's <c>PriorityGroupState</c>: a group, its pin id when pinned, and when it was pinned (Go's zero time when not).</summary>
internal sealed class PriorityGroupState
{
    [JsonPropertyName("group")]
    public string Group { get; set; } = "";

    [JsonPropertyName("pinned_client_id")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    public string? PinnedClientId { get; set; }

    [JsonPropertyName("pinned_ts")]
    [JsonConverter(typeof(GoTimeConverter))]
    public long PinnedTs { get; set; }
}

/// <summary>The body of 2.11's <c>CONSUMER.UNPIN</c>: <c>{"group": name}</c>.</summary>
internal sealed class ConsumerUnpinRequest
{
    [JsonPropertyName("group")]
    public string? Group { get; set; }
}

/// <summary>The body of 2.11's <c>CONSUMER.PAUSE</c>: <c>{pause_until}</c>; absent or Go's zero time resumes.</summary>
internal sealed class ConsumerPauseRequest
{
    [JsonPropertyName("pause_until")]
    [JsonConverter(typeof(GoTimeConverter))]
    public long PauseUntil { get; set; }
}

/// <summary>2.11's <c>consumer_pause_response</c> fields (also written beside an error, as nats-server's flat struct is).</summary>
internal sealed class ConsumerPauseResponse
{
    [JsonPropertyName("paused")]
    public bool Paused { get; set; }

    [JsonPropertyName("pause_until")]
    [JsonConverter(typeof(GoTimeConverter))]
    public long PauseUntil { get; set; }

    [JsonPropertyName("pause_remaining")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)]
    public long PauseRemaining { get; set; }
}

/// <summary>The body of <c>CONSUMER.CREATE</c>: <c>{stream_name, config, action}</c>.</summary>
internal sealed class ConsumerCreateRequest
{
    [JsonPropertyName("stream_name")]
    public string Stream { get; set; } = "";

    [JsonPropertyName("config")]
    public ConsumerConfig Config { get; set; } = new();

    [JsonPropertyName("action")]
    [JsonConverter(typeof(ConsumerActionConverter))]
    public ConsumerAction Action { get; set; }
}

/// <summary>Paged list requests (names, lists, info with subjects): offset, optional subject filter.</summary>
internal sealed class ApiListRequest
{
    [JsonPropertyName("offset")]
    public int Offset { get; set; }

    [JsonPropertyName("subject")]
    public string? Subject { get; set; }

    [JsonPropertyName("deleted_details")]
    public bool DeletedDetails { get; set; }

    [JsonPropertyName("subjects_filter")]
    public string? SubjectsFilter { get; set; }
}

/// <summary><c>STREAM.PURGE</c> body.</summary>
internal sealed class PurgeRequest
{
    [JsonPropertyName("seq")]
    public ulong Sequence { get; set; }

    [JsonPropertyName("filter")]
    public string? Filter { get; set; }

    [JsonPropertyName("keep")]
    public ulong Keep { get; set; }
}

/// <summary><c>STREAM.MSG.GET</c> and <c>DIRECT.GET</c> body.</summary>
internal sealed class MessageGetRequest
{
    [JsonPropertyName("seq")]
    public ulong Sequence { get; set; }

    [JsonPropertyName("last_by_subj")]
    public string? LastBySubject { get; set; }

    [JsonPropertyName("next_by_subj")]
    public string? NextBySubject { get; set; }

    /// <summary>2.11 direct get: how many messages (a batch answered with a <c>204 EOB</c> status); 0 for one.</summary>
    [JsonPropertyName("batch")]
    public int Batch { get; set; }

    /// <summary>2.11 direct get: stop once this many bytes were sent (0: 64 MiB, nats-server's default <c>max_pending</c>).</summary>
    [JsonPropertyName("max_bytes")]
    public int MaxBytes { get; set; }

    /// <summary>2.11 direct get: the last message of each subject matching these filters.</summary>
    [JsonPropertyName("multi_last")]
    public List<string>? MultiLast { get; set; }

    /// <summary>2.11 direct get with <c>multi_last</c>: as of this sequence (0: the last).</summary>
    [JsonPropertyName("up_to_seq")]
    public ulong UpToSequence { get; set; }

    /// <summary>2.11 direct get with <c>multi_last</c>: as of this time.</summary>
    [JsonPropertyName("up_to_time")]
    [JsonConverter(typeof(NullableGoTimeConverter))]
    public long? UpToTime { get; set; }
}

/// <summary><c>STREAM.MSG.DELETE</c> body.</summary>
internal sealed class MessageDeleteRequest
{
    [JsonPropertyName("seq")]
    public ulong Sequence { get; set; }

    [JsonPropertyName("no_erase")]
    public bool NoErase { get; set; }
}

/// <summary>A message returned by <c>STREAM.MSG.GET</c>: headers and data base64-encoded.</summary>
internal sealed class StoredMessageModel
{
    [JsonPropertyName("subject")]
    public string Subject { get; set; } = "";

    [JsonPropertyName("seq")]
    public ulong Sequence { get; set; }

    [JsonPropertyName("hdrs")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    public byte[]? Headers { get; set; }

    [JsonPropertyName("data")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    public byte[]? Data { get; set; }

    [JsonPropertyName("time")]
    [JsonConverter(typeof(GoTimeConverter))]
    public long Time { get; set; }
}

/// <summary>The JSON form of a pull request (<c>JSApiConsumerGetNextRequest</c>).</summary>
internal sealed class NextRequest
{
    [JsonPropertyName("expires")]
    public long Expires { get; set; }

    [JsonPropertyName("batch")]
    public int Batch { get; set; }

    [JsonPropertyName("max_bytes")]
    public int MaxBytes { get; set; }

    [JsonPropertyName("no_wait")]
    public bool NoWait { get; set; }

    [JsonPropertyName("idle_heartbeat")]
    public long Heartbeat { get; set; }

    /// <summary>2.11: the priority group the request is for.</summary>
    [JsonPropertyName("group")]
    public string? Group { get; set; }

    /// <summary>2.11 <c>overflow</c>: served only while at least this many messages are pending.</summary>
    [JsonPropertyName("min_pending")]
    public long MinPending { get; set; }

    /// <summary>2.11 <c>overflow</c>: served only while at least this many messages await acknowledgement.</summary>
    [JsonPropertyName("min_ack_pending")]
    public long MinAckPending { get; set; }

    /// <summary>2.11 <c>pinned_client</c>: the pin id the requester holds.</summary>
    [JsonPropertyName("id")]
    public string? Id { get; set; }
}

/// <summary><c>-NAK {"delay": ns}</c>.</summary>
internal sealed class NakOptions
{
    [JsonPropertyName("delay")]
    public long Delay { get; set; }
}

/// <summary>Account limits (<c>JetStreamAccountLimits</c>).</summary>
internal sealed class AccountLimits
{
    [JsonPropertyName("max_memory")]
    public long MaxMemory { get; set; } = -1;

    [JsonPropertyName("max_storage")]
    public long MaxStorage { get; set; } = -1;

    [JsonPropertyName("max_streams")]
    public int MaxStreams { get; set; } = -1;

    [JsonPropertyName("max_consumers")]
    public int MaxConsumers { get; set; } = -1;

    [JsonPropertyName("max_ack_pending")]
    public int MaxAckPending { get; set; } = -1;

    [JsonPropertyName("memory_max_stream_bytes")]
    public long MemoryMaxStreamBytes { get; set; } = -1;

    [JsonPropertyName("storage_max_stream_bytes")]
    public long StorageMaxStreamBytes { get; set; } = -1;

    [JsonPropertyName("max_bytes_required")]
    public bool MaxBytesRequired { get; set; }
}

/// <summary>API call counters (<c>JetStreamAPIStats</c>).</summary>
internal sealed class ApiStats
{
    /// <summary>2.11's <c>level</c>: the API level served (<see cref="Api.UnsupportedFields.ApiLevel"/>), written first as nats-server does.</summary>
    [JsonPropertyName("level")]
    public int Level { get; set; } = Api.UnsupportedFields.ApiLevel;

    [JsonPropertyName("total")]
    public ulong Total { get; set; }

    [JsonPropertyName("errors")]
    public ulong Errors { get; set; }
}

/// <summary><c>$JS.API.INFO</c>'s body (<c>JetStreamAccountStats</c>).</summary>
internal sealed class AccountInfoModel
{
    [JsonPropertyName("memory")]
    public ulong Memory { get; set; }

    [JsonPropertyName("storage")]
    public ulong Storage { get; set; }

    [JsonPropertyName("streams")]
    public int Streams { get; set; }

    [JsonPropertyName("consumers")]
    public int Consumers { get; set; }

    [JsonPropertyName("limits")]
    public AccountLimits Limits { get; set; } = new();

    [JsonPropertyName("domain")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)]
    public string? Domain { get; set; }

    [JsonPropertyName("api")]
    public ApiStats Api { get; set; } = new();
}
