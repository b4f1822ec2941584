using Broker.Abstractions;
using Broker.JetStream.Internal.Json;
using Broker.JetStream.Internal.Models;

namespace Broker.JetStream.Internal.Api;

/// <summary>Message requests: get (by sequence, last or next by subject) and delete.</summary>
internal sealed partial class JetStreamApi
{
    /// <summary><c>STREAM.MSG.GET.&lt;stream&gt;</c> (nats-server <c>jsMsgGetRequest</c>).</summary>
    private void GetMessage(ApiRequest request, string name)
    {
        var response = new ApiResponse("stream_msg_get_response");
        if (IsEmpty(request.Payload))
        {
            Reply(request, response.WithError(ApiErrors.BadRequest));
            return;
        }

        if (!TryParse(request.Payload, JetStreamJson.Context.MessageGetRequest, out var get, out var invalid))
        {
            Reply(request, response.WithError(invalid));
            return;
        }

        var hasLast = !string.IsNullOrEmpty(get!.LastBySubject);
        var hasNext = !string.IsNullOrEmpty(get.NextBySubject);
        if ((get.Sequence > 0 && hasLast) || (get.Sequence == 0 && !hasLast && !hasNext) || (hasLast && hasNext))
        {
            Reply(request, response.WithError(ApiErrors.BadRequest));
            return;
        }

        if (engine.FindStream(name) is not { } stream)
        {
            Reply(request, response.WithError(ApiErrors.StreamNotFound));
            return;
        }

        var message = new StoredMessage();
        if (stream.Get(get, message) != LoadStatus.Found)
        {
            Reply(request, response.WithError(ApiErrors.NoMessageFound));
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
        Reply(request, response.WithField("message", System.Text.Json.JsonSerializer.Serialize(model, JetStreamJson.Context.StoredMessageModel)));
    }

    /// <summary><c>STREAM.MSG.DELETE.&lt;stream&gt;</c> with <c>{seq, no_erase}</c>.</summary>
    private void DeleteMessage(ApiRequest request, string name)
    {
        var response = new ApiResponse("stream_msg_delete_response");
        if (IsEmpty(request.Payload))
        {
            Reply(request, response.WithError(ApiErrors.BadRequest));
            return;
        }

        if (!TryParse(request.Payload, JetStreamJson.Context.MessageDeleteRequest, out var delete, out var invalid))
        {
            Reply(request, response.WithError(invalid));
            return;
        }

        if (engine.FindStream(name) is not { } stream)
        {
            Reply(request, response.WithError(ApiErrors.StreamNotFound));
            return;
        }

        var config = stream.Config;
        if (config.Sealed)
        {
            Reply(request, response.WithError(ApiErrors.StreamSealed));
            return;
        }

        if (config.DenyDelete)
        {
            Reply(request, response.WithError(ApiErrors.StreamMessageDeleteFailed("message delete not permitted")));
            return;
        }

        if (!stream.DeleteMessage(delete!.Sequence, delete.NoErase))
        {
            Reply(request, response.WithError(ApiErrors.SequenceNotFound(delete.Sequence)));
            return;
        }

        Reply(request, response.WithField("success", "true"));
    }
}
