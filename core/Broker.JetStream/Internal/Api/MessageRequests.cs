using Broker.Abstractions;
using Broker.JetStream.Internal.Json;
using Broker.JetStream.Internal.Models;
using Broker.JetStream.Internal.Streams;

namespace Broker.JetStream.Internal.Api;

/// <summary>
/// Message requests of a stream: get (by sequence, last or next by subject; nats-server <c>jsMsgGetRequest</c>) and
/// delete (<c>jsMsgDeleteRequest</c>).
/// </summary>
internal sealed class MessageRequests(Func<string, MessageStream?> findStream, ApiRequestReader reader, ApiResponder responder)
{
    /// <summary><c>STREAM.MSG.GET.&lt;stream&gt;</c>.</summary>
    public void Get(ApiRequest request, string name)
    {
        var response = new ApiResponse("stream_msg_get_response");
        if (ApiRequestReader.IsEmpty(request.Payload))
        {
            responder.Reply(request, response.WithError(ApiErrors.BadRequest));
            return;
        }

        if (!reader.TryParse(request.Payload, JetStreamJson.Context.MessageGetRequest, out var get, out var invalid))
        {
            responder.Reply(request, response.WithError(invalid));
            return;
        }

        var hasLast = !string.IsNullOrEmpty(get!.LastBySubject);
        var hasNext = !string.IsNullOrEmpty(get.NextBySubject);
        // 2.11: a batch is for direct get only.
        if (get.Batch > 0 || get.MaxBytes > 0 || (get.Sequence > 0 && hasLast) || (get.Sequence == 0 && !hasLast && !hasNext) || (hasLast && hasNext))
        {
            responder.Reply(request, response.WithError(ApiErrors.BadRequest));
            return;
        }

        if (findStream(name) is not { } stream)
        {
            responder.Reply(request, response.WithError(ApiErrors.StreamNotFound));
            return;
        }

        var message = new StoredMessage();
        if (stream.Get(get, message) != LoadStatus.Found)
        {
            responder.Reply(request, response.WithError(ApiErrors.NoMessageFound));
            return;
        }

        var model = new StoredMessageModel
        {
            Subject = System.Text.Encoding.UTF8.GetString(message.Subject.Span),
            Sequence = message.Sequence,
            Headers = message.Headers.IsEmpty ? null : message.Headers.ToArray(),
            Data = message.Payload.IsEmpty ? null : message.Payload.ToArray(),
            Time = message.Timestamp,
        };
        responder.Reply(request, response.WithField("message", System.Text.Json.JsonSerializer.Serialize(model, JetStreamJson.Context.StoredMessageModel)));
    }

    /// <summary><c>STREAM.MSG.DELETE.&lt;stream&gt;</c> with <c>{seq, no_erase}</c>.</summary>
    public void Delete(ApiRequest request, string name)
    {
        var response = new ApiResponse("stream_msg_delete_response");
        if (ApiRequestReader.IsEmpty(request.Payload))
        {
            responder.Reply(request, response.WithError(ApiErrors.BadRequest));
            return;
        }

        if (!reader.TryParse(request.Payload, JetStreamJson.Context.MessageDeleteRequest, out var delete, out var invalid))
        {
            responder.Reply(request, response.WithError(invalid));
            return;
        }

        if (findStream(name) is not { } stream)
        {
            responder.Reply(request, response.WithError(ApiErrors.StreamNotFound));
            return;
        }

        var config = stream.Config;
        if (config.Sealed)
        {
            responder.Reply(request, response.WithError(ApiErrors.StreamSealed));
            return;
        }

        if (config.DenyDelete)
        {
            responder.Reply(request, response.WithError(ApiErrors.StreamMessageDeleteFailed("message delete not permitted")));
            return;
        }

        if (!stream.DeleteMessage(delete!.Sequence, delete.NoErase))
        {
            responder.Reply(request, response.WithError(ApiErrors.SequenceNotFound(delete.Sequence)));
            return;
        }

        responder.Reply(request, response.WithField("success", "true"));
    }
}
