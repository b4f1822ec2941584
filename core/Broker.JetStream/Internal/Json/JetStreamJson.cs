using System.Text.Encodings.Web;
using System.Text.Json;
using System.Text.Json.Serialization;
using System.Text.RegularExpressions;
using Broker.JetStream.Internal.Models;

namespace Broker.JetStream.Internal.Json;

/// <summary>The engine's JSON: source-generated metadata for every API model, compact output like Go's.</summary>
[JsonSourceGenerationOptions(
    DefaultIgnoreCondition = JsonIgnoreCondition.Never,
    NumberHandling = JsonNumberHandling.Strict,
    ReadCommentHandling = JsonCommentHandling.Disallow)]
[JsonSerializable(typeof(StreamConfig))]
[JsonSerializable(typeof(ConsumerConfig))]
[JsonSerializable(typeof(StreamInfoModel))]
[JsonSerializable(typeof(StreamStateModel))]
[JsonSerializable(typeof(ConsumerInfoModel))]
[JsonSerializable(typeof(ConsumerCreateRequest))]
[JsonSerializable(typeof(ConsumerPauseRequest))]
[JsonSerializable(typeof(ConsumerUnpinRequest))]
[JsonSerializable(typeof(ConsumerPauseResponse))]
[JsonSerializable(typeof(ApiListRequest))]
[JsonSerializable(typeof(PurgeRequest))]
[JsonSerializable(typeof(MessageGetRequest))]
[JsonSerializable(typeof(MessageDeleteRequest))]
[JsonSerializable(typeof(StoredMessageModel))]
[JsonSerializable(typeof(NextRequest))]
[JsonSerializable(typeof(NakOptions))]
[JsonSerializable(typeof(ApiError))]
[JsonSerializable(typeof(ApiPaged))]
[JsonSerializable(typeof(AccountInfoModel))]
[JsonSerializable(typeof(string))]
[JsonSerializable(typeof(List<string>))]
[JsonSerializable(typeof(List<StreamInfoModel>))]
[JsonSerializable(typeof(List<ConsumerInfoModel>))]
[JsonSerializable(typeof(StoredStreamMetadata))]
[JsonSerializable(typeof(StoredConsumerMetadata))]
[JsonSerializable(typeof(JsonElement))]
internal sealed partial class JetStreamJsonContext : JsonSerializerContext;

/// <summary>Access to the context with the relaxed encoder (Go does not escape <c>+</c> in base64, nor most other characters).</summary>
internal static partial class JetStreamJson
{
    public static JetStreamJsonContext Context { get; } = new(new JsonSerializerOptions
    {
        Encoder = JavaScriptEncoder.UnsafeRelaxedJsonEscaping,
        AllowTrailingCommas = false,
    });

    /// <summary>The same context refusing fields no model has, for <c>jetstream { strict: true }</c>.</summary>
    public static JetStreamJsonContext StrictContext { get; } = new(new JsonSerializerOptions
    {
        Encoder = JavaScriptEncoder.UnsafeRelaxedJsonEscaping,
        AllowTrailingCommas = false,
        UnmappedMemberHandling = JsonUnmappedMemberHandling.Disallow,
    });

    /// <summary>The field a strict parse refused, from System.Text.Json's message; null for another error.</summary>
    public static string? UnknownField(JsonException exception) =>
        UnmappedMember().Match(exception.Message) is { Success: true } match ? match.Groups["name"].Value : null;

    [GeneratedRegex("^The JSON property '(?<name>.*)' could not be mapped to any .NET member")]
    private static partial Regex UnmappedMember();
}

/// <summary>What the engine stores with a stream (<see cref="Broker.Abstractions.StreamStoreConfig.Metadata"/>): its config and creation time.</summary>
internal sealed class StoredStreamMetadata
{
    [JsonPropertyName("config")]
    public required StreamConfig Config { get; set; }

    [JsonPropertyName("created")]
    [JsonConverter(typeof(GoTimeConverter))]
    public long Created { get; set; }
}

/// <summary>What the engine stores with a consumer: its config and creation time.</summary>
internal sealed class StoredConsumerMetadata
{
    [JsonPropertyName("config")]
    public required ConsumerConfig Config { get; set; }

    [JsonPropertyName("name")]
    public string Name { get; set; } = "";

    [JsonPropertyName("created")]
    [JsonConverter(typeof(GoTimeConverter))]
    public long Created { get; set; }

    /// <summary>What a consumer of this name, configuration and creation time asks its store for, this metadata inside.</summary>
    public static Abstractions.ConsumerStoreConfig StoreConfig(string name, ConsumerConfig config, long created) => new()
    {
        Name = name,
        AckPolicy = config.AckPolicy,
        MaxDeliver = config.MaxDeliver,
        MemoryOnly = config.MemoryStorage,
        Durable = config.IsDurable,
        Metadata = ConsumerJson.Write(new StoredConsumerMetadata { Config = config, Name = name, Created = created }),
    };
}
