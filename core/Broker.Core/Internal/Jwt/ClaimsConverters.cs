using System.Text.Json;
using System.Text.Json.Serialization;

namespace Broker.Core.Internal.Jwt;

/// <summary>
/// An account's <c>signing_keys</c>: a JSON array whose items are either a public key (a plain signing key) or a
/// scope object (<c>{"kind":"user_scope","key":...}</c>), as nats-io/jwt writes them; any other kind is an error.
/// </summary>
internal sealed class SigningKeysConverter : JsonConverter<Dictionary<string, UserScopeClaim?>>
{
    public override Dictionary<string, UserScopeClaim?>? Read(ref Utf8JsonReader reader, Type typeToConvert, JsonSerializerOptions options)
    {
        if (reader.TokenType == JsonTokenType.Null)
        {
            return null;
        }

        if (reader.TokenType != JsonTokenType.StartArray)
        {
            throw new JsonException("signing_keys must be an array");
        }

        var keys = new Dictionary<string, UserScopeClaim?>(StringComparer.Ordinal);
        while (reader.Read() && reader.TokenType != JsonTokenType.EndArray)
        {
            switch (reader.TokenType)
            {
                case JsonTokenType.String:
                    keys[reader.GetString()!] = null;
                    break;
                case JsonTokenType.StartObject:
                    var scope = JsonSerializer.Deserialize(ref reader, ClaimsJsonContext.Default.UserScopeClaim)
                        ?? throw new JsonException("signing key scope is null");
                    if (scope.Kind != "user_scope")
                    {
                        throw new JsonException($"unknown signing key scope \"{scope.Kind}\"");
                    }

                    keys[scope.Key] = scope;
                    break;
                case JsonTokenType.Null:
                    break;
                default:
                    throw new JsonException("signing key must be a string or an object");
            }
        }

        return keys;
    }

    public override void Write(Utf8JsonWriter writer, Dictionary<string, UserScopeClaim?> value, JsonSerializerOptions options)
    {
        writer.WriteStartArray();
        foreach (var (key, scope) in value)
        {
            if (scope is null)
            {
                writer.WriteStringValue(key);
            }
            else
            {
                JsonSerializer.Serialize(writer, scope, ClaimsJsonContext.Default.UserScopeClaim);
            }
        }

        writer.WriteEndArray();
    }
}

/// <summary>A user's <c>src</c>: an array of CIDRs, or one comma-separated string (lower-cased, empty items dropped) as older JWTs have it.</summary>
internal sealed class CidrListConverter : JsonConverter<List<string>>
{
    public override List<string>? Read(ref Utf8JsonReader reader, Type typeToConvert, JsonSerializerOptions options)
    {
        switch (reader.TokenType)
        {
            case JsonTokenType.Null:
                return null;
            case JsonTokenType.String:
                var list = new List<string>();
                foreach (var item in reader.GetString()!.ToLowerInvariant().Split(','))
                {
                    var trimmed = item.Trim();
                    if (trimmed.Length > 0 && !list.Contains(trimmed))
                    {
                        list.Add(trimmed);
                    }
                }

                return list;
            case JsonTokenType.StartArray:
                var items = new List<string>();
                while (reader.Read() && reader.TokenType != JsonTokenType.EndArray)
                {
                    items.Add(reader.TokenType == JsonTokenType.String ? reader.GetString()! : throw new JsonException("src items must be strings"));
                }

                return items;
            default:
                throw new JsonException("src must be an array or a string");
        }
    }

    public override void Write(Utf8JsonWriter writer, List<string> value, JsonSerializerOptions options)
    {
        writer.WriteStartArray();
        foreach (var item in value)
        {
            writer.WriteStringValue(item);
        }

        writer.WriteEndArray();
    }
}
