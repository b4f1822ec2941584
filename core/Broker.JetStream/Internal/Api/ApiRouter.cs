using Broker.JetStream.Internal.Models;

namespace Broker.JetStream.Internal.Api;

/// <summary>
/// Routes a <c>$JS.API</c> request by its subject to the handler of its area (nats-server's <c>jsAPIRoutedReqs</c>
/// table and <c>apiDispatch</c>): account info, streams, messages, consumers, snapshots and restores. Requests nats-server only answers in a
/// cluster are refused with its 503 / 10010; unknown subjects get no reply, as
/// from a single nats-server. A request that requires a higher API level (2.11's <c>Nats-Required-Api-Level</c>) is
/// refused before it is looked at.
/// </summary>
internal sealed class ApiRouter(ApiResponder responder, AccountRequests account, StreamRequests streams, MessageRequests messages, ConsumerRequests consumers, Snapshots.SnapshotRequests snapshots)
{
    private static ApiError ClusterRequired { get; } = new(503, 10010, "JetStream clustering support required");

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
            responder.Reply(request, new ApiResponse(type).WithError(UnsupportedFields.RequiredApiLevel));
            return;
        }

        switch (tokens[2])
        {
            case "INFO" when tokens.Length == 3:
                account.Info(request);
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
                return streams.CreateAsync(request, name);
            case "UPDATE" when tokens.Length == 5:
                streams.Update(request, name);
                break;
            case "NAMES" when tokens.Length == 4:
                streams.Names(request);
                break;
            case "LIST" when tokens.Length == 4:
                streams.List(request);
                break;
            case "INFO" when tokens.Length == 5:
                streams.Info(request, name);
                break;
            case "DELETE" when tokens.Length == 5:
                return streams.DeleteAsync(request, name);
            case "PURGE" when tokens.Length == 5:
                streams.Purge(request, name);
                break;
            case "MSG" when tokens.Length == 6 && tokens[4] == "GET":
                messages.Get(request, tokens[5]);
                break;
            case "MSG" when tokens.Length == 6 && tokens[4] == "DELETE":
                messages.Delete(request, tokens[5]);
                break;
            case "SNAPSHOT" when tokens.Length == 5:
                snapshots.Snapshot(request, name);
                break;
            case "RESTORE" when tokens.Length == 5:
                snapshots.Restore(request, name);
                break;
            case "LEADER" when tokens.Length == 6 && tokens[4] == "STEPDOWN":
                responder.Reply(request, new ApiResponse("stream_leader_stepdown_response").WithError(ClusterRequired));
                break;
            case "PEER" when tokens.Length == 6 && tokens[4] == "REMOVE":
                responder.Reply(request, new ApiResponse("stream_remove_peer_response").WithError(ClusterRequired));
                break;
        }

        return Task.CompletedTask;
    }

    private Task HandleConsumerAsync(ApiRequest request, string[] tokens)
    {
        switch (tokens.Length > 3 ? tokens[3] : "")
        {
            case "CREATE" when tokens.Length >= 5:
                return consumers.CreateAsync(request, tokens, durableLegacy: false);
            case "DURABLE" when tokens.Length >= 5 && tokens[4] == "CREATE":
                return consumers.CreateAsync(request, tokens, durableLegacy: true);
            case "DELETE" when tokens.Length == 6:
                return consumers.DeleteAsync(request, tokens[4], tokens[5]);
            case "INFO" when tokens.Length == 6:
                consumers.Info(request, tokens[4], tokens[5]);
                break;
            case "NAMES" when tokens.Length == 5:
                consumers.Names(request, tokens[4]);
                break;
            case "LIST" when tokens.Length == 5:
                consumers.List(request, tokens[4]);
                break;
            case "PAUSE" when tokens.Length == 6:
                consumers.Pause(request, tokens[4], tokens[5]);
                break;
            case "UNPIN" when tokens.Length == 6:
                consumers.Unpin(request, tokens[4], tokens[5]);
                break;
            case "LEADER" when tokens.Length == 7 && tokens[4] == "STEPDOWN":
                responder.Reply(request, new ApiResponse("consumer_leader_stepdown_response").WithError(ClusterRequired));
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
        ("CONSUMER", "PAUSE", _) => "consumer_pause_response",
        ("CONSUMER", "UNPIN", _) => "consumer_unpin_response",
        _ => null,
    };
}
