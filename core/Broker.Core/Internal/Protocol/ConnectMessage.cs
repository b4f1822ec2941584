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
    /// <remarks>
    /// Read with <see cref="Utf8JsonReader"/> rather than a serializer context: the context's metadata instantiated
    /// System.Text.Json's generic property code over <c>bool</c>, <c>bool?</c>, <c>int?</c> (about 100 methods the
    /// JIT compiled at every process's first connection; docs/benchmarks.md, issue 24). It accepts what the
    /// source-generated deserializer accepted: names matched case-insensitively, unknown properties skipped,
    /// <c>null</c> for any field, the last of repeated names; anything else (a wrong value type, trailing data,
    /// comments) is not a CONNECT.
    /// </remarks>
    public static ConnectMessage? TryParse(ReadOnlySpan<byte> json)
    {
        try
        {
            var reader = new Utf8JsonReader(json);
            if (!reader.Read() || reader.TokenType == JsonTokenType.Null)
            {
                return null;
            }

            if (reader.TokenType != JsonTokenType.StartObject)
            {
                return null;
            }

            var connect = new ConnectMessage();
            while (reader.Read() && reader.TokenType == JsonTokenType.PropertyName)
            {
                var name = reader.GetString()!;
                reader.Read();
                if (!connect.TryRead(name, ref reader))
                {
                    return null;
                }
            }

            // The object's end; then nothing but whitespace (a second value throws).
            return reader.TokenType == JsonTokenType.EndObject && !reader.Read() ? connect : null;
        }
        catch (JsonException)
        {
            return null;
        }
        catch (InvalidOperationException)
        {
            // A value of the wrong type (GetString on a number, GetBoolean on a string, ...).
            return null;
        }
    }

    // Reads the value at the reader into the named field; false when the value has the wrong type.
    private bool TryRead(string name, ref Utf8JsonReader reader)
    {
        switch (name.ToLowerInvariant())
        {
            case "verbose": Verbose = ReadBool(ref reader); break;
            case "pedantic": Pedantic = ReadBool(ref reader); break;
            case "echo": Echo = ReadBool(ref reader); break;
            case "tls_required": TlsRequired = ReadBool(ref reader); break;
            case "headers": Headers = ReadBool(ref reader); break;
            case "no_responders": NoResponders = ReadBool(ref reader); break;
            case "new_account": NewAccount = ReadBool(ref reader); break;
            case "auth_token": AuthToken = ReadString(ref reader); break;
            case "user": User = ReadString(ref reader); break;
            case "pass": Password = ReadString(ref reader); break;
            case "nkey": Nkey = ReadString(ref reader); break;
            case "sig": Signature = ReadString(ref reader); break;
            case "jwt": Jwt = ReadString(ref reader); break;
            case "name": Name = ReadString(ref reader); break;
            case "lang": Lang = ReadString(ref reader); break;
            case "version": Version = ReadString(ref reader); break;
            case "account": Account = ReadString(ref reader); break;
            case "protocol":
                if (reader.TokenType == JsonTokenType.Null)
                {
                    Protocol = null;
                }
                else if (reader.TokenType == JsonTokenType.Number && reader.TryGetInt32(out var protocol))
                {
                    Protocol = protocol;
                }
                else
                {
                    return false;
                }

                break;
            default:
                reader.Skip();
                break;
        }

        return true;
    }

    // true, false or null; any other token throws InvalidOperationException (not a CONNECT).
    private static bool? ReadBool(ref Utf8JsonReader reader) => reader.TokenType switch
    {
        JsonTokenType.True => true,
        JsonTokenType.False => false,
        JsonTokenType.Null => null,
        _ => throw new InvalidOperationException("not a boolean"),
    };

    // A string or null; any other token makes GetString throw InvalidOperationException (not a CONNECT).
    private static string? ReadString(ref Utf8JsonReader reader) => reader.GetString();
}
