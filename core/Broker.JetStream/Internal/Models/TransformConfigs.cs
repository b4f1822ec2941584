using System.Text.Json.Serialization;

namespace Broker.JetStream.Internal.Models;

/// <summary>
/// A stream's <c>republish</c> (nats-server 2.9 <c>RePublish</c>): every stored message whose subject matches
/// <see cref="Source"/> is published again to <see cref="Destination"/> (a subject transform of it) in the stream's
/// account, with the stream, subject and sequences in headers, and without its payload when <see cref="HeadersOnly"/>.
/// A record, so that an update is compared by value as nats-server's <c>reflect.DeepEqual</c> compares it.
/// </summary>
internal sealed record RePublishConfig
{
    /// <summary>The subjects republished; empty in a request means all (<c>&gt;</c>), which is what the stream then reports.</summary>
    [JsonPropertyName("src")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)]
    public string? Source { get; set; }

    [JsonPropertyName("dest")]
    public string Destination { get; set; } = "";

    [JsonPropertyName("headers_only")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)]
    public bool HeadersOnly { get; set; }
}

/// <summary>
/// A stream's <c>subject_transform</c> (nats-server 2.10 <c>SubjectTransformConfig</c>): a message taken in on a
/// subject matching <see cref="Source"/> (all when empty) is stored under <see cref="Destination"/>, a subject
/// transform of it; an empty destination transforms nothing.
/// </summary>
internal sealed record SubjectTransformConfig
{
    [JsonPropertyName("src")]
    public string Source { get; set; } = "";

    [JsonPropertyName("dest")]
    public string Destination { get; set; } = "";
}
