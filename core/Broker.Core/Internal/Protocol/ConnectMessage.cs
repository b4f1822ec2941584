using System.Text.Json;
using System.Text.Json.Serialization;

namespace Broker.Core.Internal.Protocol;

/// <summary>
/// The CONNECT options a client may send. Every field is nullable so a CONNECT can be applied over the current
/// options the way nats-server unmarshals it over its defaults (verbose, pedantic and echo true).
/// </summary>
internal sealed class ConnectMessage
{
    [JsonPropertyName("verbose")]
    public bool? Verbose { get; set; }

    [JsonPropertyName("pedantic")]
    public bool? Pedantic { get; set; }

    [JsonPropertyName("echo")]
    public bool? Echo { get; set; }

    [JsonPropertyName("tls_required")]
    public bool? TlsRequired { get; set; }

    [JsonPropertyName("auth_token")]
    public string? AuthToken { get; set; }

    [JsonPropertyName("user")]
    public string? User { get; set; }

    [JsonPropertyName("pass")]
    public string? Password { get; set; }

    [JsonPropertyName("nkey")]
    public string? Nkey { get; set; }

    [JsonPropertyName("sig")]
    public string? Signature { get; set; }

    [JsonPropertyName("jwt")]
    public string? Jwt { get; set; }

    [JsonPropertyName("name")]
    public string? Name { get; set; }

    [JsonPropertyName("lang")]
    public string? Lang { get; set; }

    [JsonPropertyName("version")]
    public string? Version { get; set; }

    [JsonPropertyName("protocol")]
    public int? Protocol { get; set; }

    [JsonPropertyName("headers")]
    public bool? Headers { get; set; }

    [JsonPropertyName("no_responders")]
    public bool? NoResponders { get; set; }

    [JsonPropertyName("account")]
    public string? Account { get; set; }

    [JsonPropertyName("new_account")]
    public bool? NewAccount { get; set; }

    /// <summary>Parses a CONNECT argument; <see langword="null"/> when it is not a JSON object of the right shape.</summary>
    public static ConnectMessage? TryParse(ReadOnlySpan<byte> json)
    {
        try
        {
            return JsonSerializer.Deserialize(json, ProtocolJsonContext.Default.ConnectMessage);
        }
        catch (JsonException)
        {
            return null;
        }
    }
}

/// <summary>Source-generated JSON metadata for protocol messages (no reflection, trimming-safe).</summary>
[JsonSourceGenerationOptions(PropertyNameCaseInsensitive = true, DefaultIgnoreCondition = JsonIgnoreCondition.WhenWritingNull)]
[JsonSerializable(typeof(ConnectMessage))]
[JsonSerializable(typeof(ServerInfo))]
internal sealed partial class ProtocolJsonContext : JsonSerializerContext;
