using System.Security.Cryptography;
using System.Text;
using System.Text.Json;
using System.Text.Json.Serialization;
using Broker.JetStream.Internal.Json;

namespace Broker.JetStream.Internal.Models;

/// <summary>
/// A stream's <c>mirror</c> or one of its <c>sources</c> (nats-server <c>StreamSource</c>): the origin stream, where to
/// start, a filter, and for an origin in another account or domain the API and delivery prefixes.
/// </summary>
internal sealed class StreamSourceConfig
{
    [JsonPropertyName("name")]
    public string Name { get; set; } = "";

    [JsonPropertyName("opt_start_seq")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)]
    public ulong OptStartSeq { get; set; }

    [JsonPropertyName("opt_start_time")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    [JsonConverter(typeof(NullableGoTimeConverter))]
    public long? OptStartTime { get; set; }

    [JsonPropertyName("filter_subject")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    public string? FilterSubject { get; set; }

    [JsonPropertyName("external")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    public ExternalStreamConfig? External { get; set; }

    /// <summary>
    /// 2.10 <c>subject_transforms</c>: the origin's consumer filters on their sources, and a message is stored under
    /// the destination of the first whose source it is within (unchanged for an empty destination); null for none
    /// (an empty list is normalised to null). Not with <see cref="FilterSubject"/>.
    /// </summary>
    [JsonPropertyName("subject_transforms")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    public List<SubjectTransformConfig>? SubjectTransforms { get; set; }

    /// <summary>
    /// nats-server's <c>iname</c>: the stream's name, and for an external origin <c>name:hash(api)</c>, so two sources
    /// of streams with the same name in different places are told apart (also in <c>Nats-Stream-Source</c>).
    /// </summary>
    [JsonIgnore]
    public string IndexName => External is null ? Name : Name + ":" + Hash(External.Api);

    public StreamSourceConfig Clone()
    {
        var copy = (StreamSourceConfig)MemberwiseClone();
        copy.External = External is null ? null : new ExternalStreamConfig { Api = External.Api, Deliver = External.Deliver };
        copy.SubjectTransforms = SubjectTransforms?.ConvertAll(static transform => transform with { });
        return copy;
    }

    /// <summary>Whether <paramref name="other"/> filters and transforms the origin's messages as this does.</summary>
    public bool SameFilters(StreamSourceConfig other) =>
        (FilterSubject ?? "") == (other.FilterSubject ?? "")
        && (SubjectTransforms is null ? other.SubjectTransforms is null : other.SubjectTransforms is not null && SubjectTransforms.SequenceEqual(other.SubjectTransforms));

    /// <summary>The subjects the origin's consumer is filtered on: the transforms' sources, else the filter; empty for all.</summary>
    public List<string> Filters() =>
        SubjectTransforms?.ConvertAll(static transform => transform.Source) ?? (string.IsNullOrEmpty(FilterSubject) ? [] : [FilterSubject]);

    /// <summary>nats-server <c>getHash</c>: 8 characters of base 62 from the SHA-256 of the text.</summary>
    private static string Hash(string text)
    {
        const string digits = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
        var sha = SHA256.HashData(Encoding.UTF8.GetBytes(text));
        Span<char> hash = stackalloc char[8];
        for (var i = 0; i < hash.Length; i++)
        {
            hash[i] = digits[sha[i] % digits.Length];
        }

        return new string(hash);
    }
}

/// <summary>nats-server <c>ExternalStream</c>: the API prefix the origin's <c>$JS.API</c> is imported under, and the delivery prefix.</summary>
internal sealed class ExternalStreamConfig
{
    [JsonPropertyName("api")]
    public string Api { get; set; } = "";

    [JsonPropertyName("deliver")]
    public string Deliver { get; set; } = "";
}

/// <summary>A mirror's or source's state in stream info (nats-server <c>StreamSourceInfo</c>).</summary>
internal sealed class StreamSourceInfoModel
{
    [JsonPropertyName("name")]
    public string Name { get; set; } = "";

    [JsonPropertyName("external")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    public ExternalStreamConfig? External { get; set; }

    [JsonPropertyName("lag")]
    public ulong Lag { get; set; }

    /// <summary>Nanoseconds since the origin was last heard from; -1 when never.</summary>
    [JsonPropertyName("active")]
    public long Active { get; set; }

    [JsonPropertyName("error")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    public ApiError? Error { get; set; }

    /// <summary>2.10: the origin's <c>subject_transforms</c>, as configured; null for none.</summary>
    [JsonPropertyName("subject_transforms")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    public List<SubjectTransformConfig>? SubjectTransforms { get; set; }
}
