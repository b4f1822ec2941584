using System.Text.Json;
using System.Text.Json.Serialization.Metadata;
using Broker.JetStream.Internal.Json;
using Broker.JetStream.Internal.Models;

namespace Broker.JetStream.Internal.Api;

/// <summary>
/// Reads <c>$JS.API</c> request bodies: empty bodies as nats-server's <c>isEmptyRequest</c> sees them, JSON models with
/// nats-server's errors, and the optional paged list request. Under <c>jetstream { strict: true }</c> (nats-server
/// 2.11's key; 2.12's default) a field no model knows is an error; the options are read on every request.
/// </summary>
internal sealed class ApiRequestReader(JetStreamOptions options)
{
    /// <summary>nats-server <c>isEmptyRequest</c>: no body, or an empty JSON object.</summary>
    public static bool IsEmpty(byte[] payload)
    {
        var span = payload.AsSpan().Trim(" \t\r\n"u8);
        if (span.IsEmpty || span.SequenceEqual("{}"u8))
        {
            return true;
        }

        try
        {
            using var document = JsonDocument.Parse(payload);
            return document.RootElement.ValueKind == JsonValueKind.Object && !document.RootElement.EnumerateObject().Any();
        }
        catch (JsonException)
        {
            return false;
        }
    }

    /// <summary>Parses a request body; false with the error to answer when it is not valid.</summary>
    public bool TryParse<T>(byte[] payload, JsonTypeInfo<T> typeInfo, out T? value, out ApiError error)
        where T : class
    {
        error = ApiErrors.InvalidJson;
        try
        {
            var info = options.Strict ? (JsonTypeInfo<T>)JetStreamJson.StrictContext.GetTypeInfo(typeof(T))! : typeInfo;
            value = JsonSerializer.Deserialize(payload, info);
            return value is not null;
        }
        catch (JsonException ex)
        {
            if (JetStreamJson.UnknownField(ex) is { } field)
            {
                error = new ApiError(400, 10025, $"invalid JSON: json: unknown field \"{field}\"");
            }

            value = null;
            return false;
        }
    }

    /// <summary>An optional paged request body (offset, subject filters); empty means defaults.</summary>
    public bool TryParseList(ApiRequest request, out ApiListRequest list)
    {
        list = new ApiListRequest();
        if (IsEmpty(request.Payload))
        {
            return true;
        }

        if (TryParse(request.Payload, JetStreamJson.Context.ApiListRequest, out var parsed, out _))
        {
            list = parsed!;
            return true;
        }

        return false;
    }
}
