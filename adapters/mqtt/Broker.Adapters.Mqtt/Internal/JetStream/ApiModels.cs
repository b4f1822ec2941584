using System.Text.Json.Serialization;

namespace Broker.Adapters.Mqtt.Internal.JetStream;

/// <summary>A stream's retention policy (<c>retention</c> in the stream config).</summary>
internal enum StreamRetention
{
    Limits,
    Interest,
    WorkQueue,
}

/// <summary>Where a stream keeps its messages (<c>storage</c> in the stream config).</summary>
internal enum StreamStorage
{
    File,
    Memory,
}

/// <summary>Which messages a new consumer starts with (<c>deliver_policy</c>).</summary>
internal enum ConsumerDeliverPolicy
{
    All,
    New,
}

/// <summary>What the adapter sets in a stream's config; everything else keeps the server's defaults.</summary>
/// <param name="Name">The stream name.</param>
/// <param name="Subjects">The subjects it stores.</param>
/// <param name="Retention">Its retention policy.</param>
/// <param name="MaxMessagesPerSubject">Messages kept per subject, or -1 for no limit.</param>
/// <param name="Storage">File or memory.</param>
internal sealed record StreamSpec(string Name, IReadOnlyList<string> Subjects, StreamRetention Retention, long MaxMessagesPerSubject, StreamStorage Storage);

/// <summary>A durable push consumer with explicit acks, as nats-server's MQTT creates one per QoS 1/2 subscription.</summary>
/// <param name="DurableName">The durable name.</param>
/// <param name="FilterSubject">The subject filter in the stream.</param>
/// <param name="DeliverSubject">Where the server pushes the messages.</param>
/// <param name="AckWait">How long a delivered message waits for its ack before redelivery.</param>
/// <param name="MaxAckPending">Unacknowledged messages at most, or 0 for the server's default.</param>
/// <param name="DeliverPolicy">All stored messages or only new ones.</param>
/// <param name="MoreFilterSubjects">Further filters (sent as <c>filter_subjects</c> with the first), or <see langword="null"/>.</param>
/// <param name="MemoryStorage">Keep the consumer's state in memory only (<c>mem_storage</c>).</param>
/// <param name="InactiveThreshold">Let the server delete the consumer after this long without interest (<c>inactive_threshold</c>), or <see langword="null"/>.</param>
/// <param name="DeliverGroup">The queue group whose subscribers share the deliveries (<c>deliver_group</c>), or <see langword="null"/>.</param>
internal sealed record ConsumerSpec(
    string DurableName,
    string FilterSubject,
    string DeliverSubject,
    TimeSpan AckWait,
    int MaxAckPending,
    ConsumerDeliverPolicy DeliverPolicy,
    IReadOnlyList<string>? MoreFilterSubjects = null,
    bool MemoryStorage = false,
    TimeSpan? InactiveThreshold = null,
    string? DeliverGroup = null);

/// <summary>A message read back from a stream, its data and headers decoded.</summary>
/// <param name="Subject">The subject it was published on.</param>
/// <param name="Sequence">Its stream sequence.</param>
/// <param name="Headers">Its NATS header block, or empty.</param>
/// <param name="Data">Its payload.</param>
internal sealed record FetchedMessage(string Subject, ulong Sequence, byte[] Headers, byte[] Data)
{
    /// <summary>When JetStream stored it, in nanoseconds since the Unix epoch; 0 when not known.</summary>
    public long Timestamp { get; init; }
}

/// <summary>A JetStream API error (<c>{"code","err_code","description"}</c>).</summary>
internal sealed class ApiErrorModel
{
    [JsonPropertyName("code")]
    public int Code { get; set; }

    [JsonPropertyName("err_code")]
    public int ErrorCode { get; set; }

    [JsonPropertyName("description")]
    public string? Description { get; set; }
}

/// <summary>
/// The fields the adapter reads from any API response or PubAck: one shape for all, since each response carries only
/// its own (an error, or a stream config, a message, a sequence, ...).
/// </summary>
internal sealed class ApiResponseModel
{
    [JsonPropertyName("error")]
    public ApiErrorModel? Error { get; set; }

    // PubAck.
    [JsonPropertyName("stream")]
    public string? Stream { get; set; }

    [JsonPropertyName("seq")]
    public ulong Sequence { get; set; }

    // STREAM.MSG.GET.
    [JsonPropertyName("message")]
    public MessageModel? Message { get; set; }

    // CONSUMER.CREATE.
    [JsonPropertyName("name")]
    public string? Name { get; set; }

    [JsonPropertyName("num_pending")]
    public ulong NumPending { get; set; }

    // INFO.
    [JsonPropertyName("limits")]
    public AccountLimitsModel? Limits { get; set; }
}

/// <summary>The account limits of <c>$JS.API.INFO</c> (-1: unlimited).</summary>
internal sealed class AccountLimitsModel
{
    [JsonPropertyName("max_memory")]
    public long MaxMemory { get; set; } = -1;

    [JsonPropertyName("max_storage")]
    public long MaxStorage { get; set; } = -1;
}

/// <summary>The message of a <c>STREAM.MSG.GET</c> response; <c>hdrs</c> and <c>data</c> are base64.</summary>
internal sealed class MessageModel
{
    [JsonPropertyName("subject")]
    public string Subject { get; set; } = "";

    [JsonPropertyName("seq")]
    public ulong Sequence { get; set; }

    [JsonPropertyName("hdrs")]
    public byte[]? Headers { get; set; }

    [JsonPropertyName("data")]
    public byte[]? Data { get; set; }
}

/// <summary>The body of <c>STREAM.MSG.GET</c>.</summary>
internal sealed class MessageGetRequest
{
    [JsonPropertyName("seq")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)]
    public ulong Sequence { get; set; }

    [JsonPropertyName("last_by_subj")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    public string? LastBySubject { get; set; }

    [JsonPropertyName("next_by_subj")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    public string? NextBySubject { get; set; }
}

/// <summary>The body of <c>STREAM.PURGE</c> restricted to one subject.</summary>
internal sealed class PurgeRequest
{
    [JsonPropertyName("filter")]
    public string Filter { get; set; } = "";
}

/// <summary>The body of <c>CONSUMER.DURABLE.CREATE</c> and <c>CONSUMER.CREATE</c>.</summary>
internal sealed class ConsumerCreateRequest
{
    [JsonPropertyName("stream_name")]
    public string StreamName { get; set; } = "";

    [JsonPropertyName("config")]
    public ConsumerConfigModel Config { get; set; } = new();
}

/// <summary>The consumer config fields the adapter sets; durations in nanoseconds, as Go encodes them.</summary>
internal sealed class ConsumerConfigModel
{
    [JsonPropertyName("durable_name")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    public string? DurableName { get; set; }

    [JsonPropertyName("deliver_subject")]
    public string DeliverSubject { get; set; } = "";

    [JsonPropertyName("deliver_group")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    public string? DeliverGroup { get; set; }

    [JsonPropertyName("deliver_policy")]
    public string DeliverPolicy { get; set; } = "all";

    [JsonPropertyName("ack_policy")]
    public string AckPolicy { get; set; } = "explicit";

    [JsonPropertyName("ack_wait")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)]
    public long AckWait { get; set; }

    [JsonPropertyName("filter_subject")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    public string? FilterSubject { get; set; }

    [JsonPropertyName("filter_subjects")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    public List<string>? FilterSubjects { get; set; }

    [JsonPropertyName("max_ack_pending")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)]
    public int MaxAckPending { get; set; }

    [JsonPropertyName("mem_storage")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)]
    public bool MemoryStorage { get; set; }

    [JsonPropertyName("inactive_threshold")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)]
    public long InactiveThreshold { get; set; }
}

/// <summary>Source-generated metadata of the adapter's JSON: the API models and the session records.</summary>
[JsonSourceGenerationOptions(DefaultIgnoreCondition = JsonIgnoreCondition.Never, NumberHandling = JsonNumberHandling.Strict)]
[JsonSerializable(typeof(ApiResponseModel))]
[JsonSerializable(typeof(MessageGetRequest))]
[JsonSerializable(typeof(PurgeRequest))]
[JsonSerializable(typeof(ConsumerCreateRequest))]
[JsonSerializable(typeof(Sessions.SessionRecord))]
internal sealed partial class MqttJsonContext : JsonSerializerContext;
