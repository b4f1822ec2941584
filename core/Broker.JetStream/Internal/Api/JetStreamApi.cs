using System.Text.Json;
using System.Text.Json.Serialization.Metadata;
using Broker.JetStream.Internal.Json;
using Broker.JetStream.Internal.Models;

namespace Broker.JetStream.Internal.Api;

/// <summary>
/// The <c>$JS.API</c> request handlers (nats-server <c>jetstream_api.go</c>), one partial file per area: account info
/// (here), streams (<c>.Streams.cs</c>), messages (<c>.Messages.cs</c>), consumers (<c>.Consumers.cs</c>). Each answers
/// with nats-server's response type, field names and error codes. Requests nats-server only answers in a cluster, and
/// unknown subjects, get no reply, as from a single nats-server.
/// </summary>
internal sealed partial class JetStreamApi(JetStreamEngine engine)
{
    public async Task HandleAsync(ApiRequest request)
    {
        var tokens = ApiSubjects.Tokens(request.Subject);
        if (tokens.Length < 3)
        {
            return;
        }

        if (UnsupportedFields.RequiresHigherApiLevel(request.Headers) && ResponseType(tokens) is { } type)
        {
            // 2.11's required API level: refused before the request is looked at, as nats-server does.
            Reply(request, new ApiResponse(type).WithError(UnsupportedFields.RequiredApiLevel));
            return;
        }

        switch (tokens[2])
        {
            case "INFO" when tokens.Length == 3:
                AccountInfo(request);
                break;
            case "STREAM":
                await HandleStreamAsync(request, tokens).ConfigureAwait(false);
                break;
            case "CONSUMER":
                await HandleConsumerAsync(request, tokens).ConfigureAwait(false);
                break;
        }
    }

    private Task HandleStreamAsync(ApiRequest request, string[] tokens)
    {
        var name = tokens.Length > 4 ? tokens[4] : "";
        switch (tokens.Length > 3 ? tokens[3] : "")
        {
            case "CREATE" when tokens.Length == 5:
                return CreateStreamAsync(request, name);
            case "UPDATE" when tokens.Length == 5:
                UpdateStream(request, name);
                break;
            case "NAMES" when tokens.Length == 4:
                StreamNames(request);
                break;
            case "LIST" when tokens.Length == 4:
                StreamList(request);
                break;
            case "INFO" when tokens.Length == 5:
                StreamInfo(request, name);
                break;
            case "DELETE" when tokens.Length == 5:
                return DeleteStreamAsync(request, name);
            case "PURGE" when tokens.Length == 5:
                PurgeStream(request, name);
                break;
            case "MSG" when tokens.Length == 6 && tokens[4] == "GET":
                GetMessage(request, tokens[5]);
                break;
            case "MSG" when tokens.Length == 6 && tokens[4] == "DELETE":
                DeleteMessage(request, tokens[5]);
                break;
            case "SNAPSHOT" when tokens.Length == 5:
                Reply(request, new ApiResponse("stream_snapshot_response").WithError(new ApiError(500, 10064, "snapshot failed: snapshots are not supported by this broker")));
                break;
            case "RESTORE" when tokens.Length == 5:
                Reply(request, new ApiResponse("stream_restore_response").WithError(new ApiError(500, 10062, "restore failed: restores are not supported by this broker")));
                break;
            case "LEADER" when tokens.Length == 6 && tokens[4] == "STEPDOWN":
                Reply(request, new ApiResponse("stream_leader_stepdown_response").WithError(ClusterRequired));
                break;
            case "PEER" when tokens.Length == 6 && tokens[4] == "REMOVE":
                Reply(request, new ApiResponse("stream_remove_peer_response").WithError(ClusterRequired));
                break;
        }

        return Task.CompletedTask;
    }

    private Task HandleConsumerAsync(ApiRequest request, string[] tokens)
    {
        switch (tokens.Length > 3 ? tokens[3] : "")
        {
            case "CREATE" when tokens.Length >= 5:
                return CreateConsumerAsync(request, tokens, durableLegacy: false);
            case "DURABLE" when tokens.Length >= 5 && tokens[4] == "CREATE":
                return CreateConsumerAsync(request, tokens, durableLegacy: true);
            case "DELETE" when tokens.Length == 6:
                return DeleteConsumerAsync(request, tokens[4], tokens[5]);
            case "INFO" when tokens.Length == 6:
                ConsumerInfo(request, tokens[4], tokens[5]);
                break;
            case "NAMES" when tokens.Length == 5:
                ConsumerNames(request, tokens[4]);
                break;
            case "LIST" when tokens.Length == 5:
                ConsumerList(request, tokens[4]);
                break;
            case "LEADER" when tokens.Length == 7 && tokens[4] == "STEPDOWN":
                Reply(request, new ApiResponse("consumer_leader_stepdown_response").WithError(ClusterRequired));
                break;
        }

        return Task.CompletedTask;
    }

    /// <summary>The response type of a request this API answers (without the <c>io.nats.jetstream.api.v1.</c> prefix), or null.</summary>
    private static string? ResponseType(string[] tokens) => (tokens[2], tokens.Length > 3 ? tokens[3] : "", tokens.Length > 4 ? tokens[4] : "") switch
    {
        ("INFO", "", _) => "account_info_response",
        ("STREAM", "CREATE", _) => "stream_create_response",
        ("STREAM", "UPDATE", _) => "stream_update_response",
        ("STREAM", "NAMES", _) => "stream_names_response",
        ("STREAM", "LIST", _) => "stream_list_response",
        ("STREAM", "INFO", _) => "stream_info_response",
        ("STREAM", "DELETE", _) => "stream_delete_response",
        ("STREAM", "PURGE", _) => "stream_purge_response",
        ("STREAM", "MSG", "GET") => "stream_msg_get_response",
        ("STREAM", "MSG", "DELETE") => "stream_msg_delete_response",
        ("STREAM", "SNAPSHOT", _) => "stream_snapshot_response",
        ("STREAM", "RESTORE", _) => "stream_restore_response",
        ("CONSUMER", "CREATE" or "DURABLE", _) => "consumer_create_response",
        ("CONSUMER", "DELETE", _) => "consumer_delete_response",
        ("CONSUMER", "INFO", _) => "consumer_info_response",
        ("CONSUMER", "NAMES", _) => "consumer_names_response",
        ("CONSUMER", "LIST", _) => "consumer_list_response",
        _ => null,
    };

    private static ApiError ClusterRequired { get; } = new(503, 10010, "JetStream clustering support required");

    /// <summary><c>$JS.API.INFO</c>: usage and limits of the account (nats-server <c>jsAccountInfoRequest</c>).</summary>
    private void AccountInfo(ApiRequest request)
    {
        var streams = engine.StreamsByName();
        var info = new AccountInfoModel
        {
            Memory = (ulong)Math.Max(0, engine.MemoryUsed),
            Storage = (ulong)Math.Max(0, engine.StorageUsed),
            Streams = streams.Count,
            Consumers = streams.Sum(s => s.ConsumerCount),
            Domain = engine.Options.Domain,
            Api = new ApiStats { Total = (ulong)engine.ApiTotal, Errors = (ulong)engine.ApiErrors },
        };
        Reply(request, new ApiResponse("account_info_response").With(info, JetStreamJson.Context.AccountInfoModel));
    }

    /// <summary>Sends a response and counts it (nats-server <c>sendAPIResponse</c> / <c>sendAPIErrResponse</c>).</summary>
    private void Reply(ApiRequest request, ApiResponse response)
    {
        engine.CountApi(response.Error is not null);
        engine.Reply(request.Reply, response.ToBytes());
    }

    /// <summary>nats-server <c>isEmptyRequest</c>: no body, or an empty JSON object.</summary>
    private static bool IsEmpty(byte[] payload)
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

    /// <summary>
    /// Parses a request body; false with the error to answer when it is not valid. Under <c>jetstream { strict: true }</c>
    /// (nats-server 2.11's key; 2.12's default) a field no model knows is an error too, with nats-server's text.
    /// </summary>
    private bool TryParse<T>(byte[] payload, JsonTypeInfo<T> typeInfo, out T? value, out ApiError error)
        where T : class
    {
        error = ApiErrors.InvalidJson;
        try
        {
            var info = engine.Options.Strict ? (JsonTypeInfo<T>)JetStreamJson.StrictContext.GetTypeInfo(typeof(T))! : typeInfo;
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
    private bool TryParseList(ApiRequest request, out ApiListRequest list)
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
