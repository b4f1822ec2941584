using System.Text.Json.Serialization.Metadata;
using Broker.JetStream.Internal.Consumers;
using Broker.JetStream.Internal.Json;
using Broker.JetStream.Internal.Models;
using Broker.JetStream.Internal.Streams;
using Microsoft.Extensions.Logging;

namespace Broker.JetStream.Internal.Api;

/// <summary>
/// Consumer requests (nats-server <c>jsConsumer*Request</c>): create (ephemeral, named, legacy durable), delete, info,
/// names, list, pause and unpin (2.11). The subject and the body are checked against each other here; <see cref="ConsumerCreator"/> decides
/// whether the consumer may be created or updated. A create is answered once its store has it durably and a delete once
/// its state is gone, without holding the engine's API loop meanwhile: the loop goes on to the next request, so the
/// creates of many clients share their stores' syncs (issue 25). What the loop did for a consumer (added, removed) is
/// done in the order the requests came; a create of a name whose deletion is still removing its folder waits for it.
/// </summary>
internal sealed class ConsumerRequests(Func<string, MessageStream?> findStream, ConsumerCreator creator, ApiRequestReader reader, ApiResponder responder, ILogger? logger = null)
{
    private readonly ILogger log = logger ?? Microsoft.Extensions.Logging.Abstractions.NullLogger.Instance;

    /// <summary>
    /// <c>CONSUMER.CREATE.&lt;stream&gt;</c> (ephemeral), <c>CONSUMER.CREATE.&lt;stream&gt;.&lt;name&gt;[.&lt;filter&gt;]</c> and
    /// <c>CONSUMER.DURABLE.CREATE.&lt;stream&gt;.&lt;durable&gt;</c> (nats-server <c>jsConsumerCreateRequest</c>, <c>addConsumer</c>).
    /// </summary>
    public Task CreateAsync(ApiRequest request, string[] tokens, bool durableLegacy)
    {
        var response = new ApiResponse("consumer_create_response");
        if (!reader.TryParse(request.Payload, JetStreamJson.Context.ConsumerCreateRequest, out var create, out var invalid))
        {
            responder.Reply(request, response.WithError(invalid));
            return Task.CompletedTask;
        }

        string streamName;
        string? consumerName = null;
        string? filter = null;
        if (durableLegacy)
        {
            if (tokens.Length != 7)
            {
                responder.Reply(request, response.WithError(ApiErrors.ConsumerDurableNameNotInSubject));
                return Task.CompletedTask;
            }

            streamName = tokens[5];
            consumerName = tokens[6];
        }
        else
        {
            streamName = tokens[4];
            if (tokens.Length > 5)
            {
                consumerName = tokens[5];
            }

            if (tokens.Length > 6)
            {
                filter = string.Join('.', tokens[6..]);
            }
        }

        var config = create!.Config;
        var error = CheckCreateRequest(create, streamName, consumerName, filter, durableLegacy);
        if (error is not null)
        {
            responder.Reply(request, response.WithError(error));
            return Task.CompletedTask;
        }

        if (!durableLegacy && consumerName is not null)
        {
            config.Name = consumerName;
        }

        if (findStream(streamName) is not { } stream)
        {
            responder.Reply(request, response.WithError(ApiErrors.StreamNotFound));
            return Task.CompletedTask;
        }

        Consumer? consumer = null;
        try
        {
            consumer = creator.Add(stream, config, create.Action, out var info);
            response.With(info);
        }
        catch (ApiException ex)
        {
            response.WithError(ex.Error);
        }

        if (consumer is null)
        {
            responder.Reply(request, response);
            return Task.CompletedTask;
        }

        var stored = consumer.Store.FlushAsync();
        if (stored.IsCompletedSuccessfully)
        {
            responder.Reply(request, response);
            consumer.Kick();
        }
        else
        {
            _ = ReplyWhenStoredAsync(request, response, consumer, stored);
        }

        return Task.CompletedTask;
    }

    /// <summary>Answers a create once the consumer's store has it durably; a store that failed removes the consumer and answers the error.</summary>
    private async Task ReplyWhenStoredAsync(ApiRequest request, ApiResponse response, Consumer consumer, ValueTask stored)
    {
        try
        {
            try
            {
                await stored.ConfigureAwait(false);
            }
            catch (IOException ex)
            {
                await consumer.DeleteAsync().ConfigureAwait(false);
                responder.Reply(request, new ApiResponse("consumer_create_response").WithError(ApiErrors.ConsumerStoreFailed(ex.Message)));
                return;
            }

            responder.Reply(request, response);
            consumer.Kick();
        }
#pragma warning disable CA1031 // Logged as the API loop logs a failed request.
        catch (Exception ex)
#pragma warning restore CA1031
        {
            JetStreamLog.ApiFailed(log, request.Subject, ex);
        }
    }

    private static ApiError? CheckCreateRequest(ConsumerCreateRequest create, string streamName, string? consumerName, string? filter, bool durableLegacy)
    {
        var config = create.Config;
        if (streamName != create.Stream)
        {
            return ApiErrors.StreamMismatch;
        }

        if (consumerName is not null && consumerName.AsSpan().IndexOfAny('/', '\\') >= 0)
        {
            return ApiErrors.ConsumerNameContainsPathSeparators;
        }

        if (durableLegacy)
        {
            if (string.IsNullOrEmpty(config.Durable))
            {
                return ApiErrors.ConsumerDurableNameNotSet;
            }

            if (consumerName != config.Durable)
            {
                return ApiErrors.ConsumerDurableNameNotMatchSubject;
            }
        }
        else if (consumerName is not null)
        {
            if (!string.IsNullOrEmpty(config.Durable) && consumerName != config.Durable)
            {
                return ApiErrors.ConsumerDurableNameNotMatchSubject;
            }
        }
        else if (!string.IsNullOrEmpty(config.Durable))
        {
            return ApiErrors.ConsumerEphemeralWithDurableName;
        }

        if (filter is not null)
        {
            if (config.FilterSubjects is { Count: > 1 })
            {
                return ApiErrors.ConsumerMultipleFiltersNotAllowed;
            }

            var configured = config.FilterSubject ?? (config.FilterSubjects is { Count: 1 } list ? list[0] : null);
            if (configured != filter)
            {
                return ApiErrors.ConsumerCreateFilterSubjectMismatch;
            }
        }

        return config.Replicas > 1 ? ApiErrors.StreamReplicasNotSupported : null;
    }

    /// <summary>
    /// The consumer a request names, or <see langword="null"/> after answering with nats-server's error: a non-empty
    /// body, an unknown stream, an unknown consumer, checked in that order.
    /// </summary>
    private Consumer? FindConsumerOrReply(ApiRequest request, ApiResponse response, string streamName, string consumerName)
    {
        if (!ApiRequestReader.IsEmpty(request.Payload))
        {
            responder.Reply(request, response.WithError(ApiErrors.NotEmptyRequest));
            return null;
        }

        if (findStream(streamName) is not { } stream)
        {
            responder.Reply(request, response.WithError(ApiErrors.StreamNotFound));
            return null;
        }

        var consumer = stream.FindConsumer(consumerName);
        if (consumer is null)
        {
            responder.Reply(request, response.WithError(ApiErrors.ConsumerNotFound));
        }

        return consumer;
    }

    /// <summary><c>CONSUMER.DELETE.&lt;stream&gt;.&lt;consumer&gt;</c>.</summary>
    public Task DeleteAsync(ApiRequest request, string streamName, string consumerName)
    {
        var response = new ApiResponse("consumer_delete_response");
        if (FindConsumerOrReply(request, response, streamName, consumerName) is not { } consumer)
        {
            return Task.CompletedTask;
        }

        // Out of its stream when this returns; its state is removed off the loop (a create of this name waits for it).
        var deleted = consumer.DeleteAsync();
        if (deleted.IsCompletedSuccessfully)
        {
            responder.Reply(request, response.WithField("success", "true"));
        }
        else
        {
            _ = ReplyWhenDeletedAsync(request, response, deleted);
        }

        return Task.CompletedTask;
    }

    private async Task ReplyWhenDeletedAsync(ApiRequest request, ApiResponse response, Task deleted)
    {
        try
        {
            await deleted.ConfigureAwait(false);
            responder.Reply(request, response.WithField("success", "true"));
        }
#pragma warning disable CA1031 // Logged as the API loop logs a failed request.
        catch (Exception ex)
#pragma warning restore CA1031
        {
            JetStreamLog.ApiFailed(log, request.Subject, ex);
        }
    }

    /// <summary><c>CONSUMER.INFO.&lt;stream&gt;.&lt;consumer&gt;</c>.</summary>
    public void Info(ApiRequest request, string streamName, string consumerName)
    {
        var response = new ApiResponse("consumer_info_response");
        if (FindConsumerOrReply(request, response, streamName, consumerName) is not { } consumer)
        {
            return;
        }

        responder.Reply(request, response.With(consumer.Info()));
    }

    /// <summary>
    /// 2.11 <c>CONSUMER.PAUSE.&lt;stream&gt;.&lt;consumer&gt;</c> with <c>{"pause_until": time}</c> (nats-server
    /// <c>jsConsumerPauseRequest</c>): a body that is not a JSON object or array, or a zero or past time, resumes. The
    /// response always carries <c>paused</c> and <c>pause_until</c>, beside an error too, as nats-server's flat struct does.
    /// </summary>
    public void Pause(ApiRequest request, string streamName, string consumerName)
    {
        var response = new ApiResponse("consumer_pause_response");
        var result = new ConsumerPauseResponse();
        var body = request.Payload.AsSpan().TrimStart(" \t\r\n"u8);
        var pause = new ConsumerPauseRequest();
        if (body.Length > 0 && body[0] is (byte)'{' or (byte)'[')
        {
            if (!reader.TryParse(request.Payload, JetStreamJson.Context.ConsumerPauseRequest, out var parsed, out var invalid))
            {
                responder.Reply(request, response.WithError(invalid).With(result, JetStreamJson.Context.ConsumerPauseResponse));
                return;
            }

            pause = parsed!;
        }

        if (findStream(streamName) is not { } stream)
        {
            responder.Reply(request, response.WithError(ApiErrors.StreamNotFound).With(result, JetStreamJson.Context.ConsumerPauseResponse));
            return;
        }

        if (stream.FindConsumer(consumerName) is not { } consumer)
        {
            responder.Reply(request, response.WithError(ApiErrors.ConsumerNotFound).With(result, JetStreamJson.Context.ConsumerPauseResponse));
            return;
        }

        // The deadline (Go's zero time: none) becomes the configuration's, stored with it.
        var updated = consumer.Config.Clone();
        updated.PauseUntil = pause.PauseUntil == 0 ? null : pause.PauseUntil;
        consumer.UpdateConfig(updated);
        var remaining = pause.PauseUntil == 0 ? 0 : pause.PauseUntil - GoTime.NowNanoseconds();
        result.PauseUntil = pause.PauseUntil;
        result.Paused = remaining > 0;
        result.PauseRemaining = Math.Max(remaining, 0);
        responder.Reply(request, response.With(result, JetStreamJson.Context.ConsumerPauseResponse));
        consumer.Kick();
    }

    /// <summary>
    /// 2.11 <c>CONSUMER.UNPIN.&lt;stream&gt;.&lt;consumer&gt;</c> with <c>{"group": name}</c> (nats-server
    /// <c>jsConsumerUnpinRequest</c>): the body, the group's name, the stream, the consumer and its group are checked in
    /// that order, with 2.11's errors; then the group's pin ends (<see cref="ConsumerPriority.Unpin"/>).
    /// </summary>
    public void Unpin(ApiRequest request, string streamName, string consumerName)
    {
        var response = new ApiResponse("consumer_unpin_response");
        var error = ParseUnpin(request, out var group);
        if (error is null)
        {
            var stream = findStream(streamName);
            var consumer = stream?.FindConsumer(consumerName);
            error = stream is null ? ApiErrors.StreamNotFound
                : consumer is null ? ApiErrors.ConsumerNotFound
                : consumer.Priority?.Unpin(group!) == true ? null
                : ApiErrors.ConsumerInvalidPriorityGroup;
        }

        responder.Reply(request, error is null ? response : response.WithError(error));
    }

    /// <summary>The group an unpin request names, or 2.11's error for its body.</summary>
    private ApiError? ParseUnpin(ApiRequest request, out string? group)
    {
        group = null;
        if (request.Payload.AsSpan().Trim(" \t\r\n"u8).IsEmpty)
        {
            // Go's json.Unmarshal of nothing.
            return new ApiError(400, 10025, "invalid JSON: unexpected end of JSON input");
        }

        if (!reader.TryParse(request.Payload, JetStreamJson.Context.ConsumerUnpinRequest, out var parsed, out var invalid))
        {
            return invalid;
        }

        group = parsed!.Group;
        if (string.IsNullOrEmpty(group))
        {
            return new ApiError(400, 10025, "invalid JSON: consumer group not specified");
        }

        return ConsumerPriority.IsValidGroupName(group) ? null : ApiErrors.ConsumerInvalidGroupName;
    }

    /// <summary><c>CONSUMER.NAMES.&lt;stream&gt;</c>: names, paged by 1024.</summary>
    public void Names(ApiRequest request, string streamName) =>
        ReplyPage(request, streamName, "consumer_names_response", ApiPager.Names, static c => c.Name, JetStreamJson.Context.ListString);

    /// <summary><c>CONSUMER.LIST.&lt;stream&gt;</c>: consumer infos, paged by 256.</summary>
    public void List(ApiRequest request, string streamName) =>
        ReplyPage(request, streamName, "consumer_list_response", ApiPager.List, static c => c.Info(), JetStreamJson.Context.ListConsumerInfoModel);

    /// <summary>A page of a stream's consumers; an error reply still carries the paging block and an empty list.</summary>
    private void ReplyPage<T>(ApiRequest request, string streamName, string type, ApiPager pager, Func<Consumer, T> select, JsonTypeInfo<List<T>> typeInfo)
    {
        var response = new ApiResponse(type);
        if (!reader.TryParseList(request, out var list))
        {
            responder.Reply(request, response.WithError(ApiErrors.InvalidJson).With(ApiPager.None).WithField("consumers", "[]"));
            return;
        }

        if (findStream(streamName) is not { } stream)
        {
            responder.Reply(request, response.WithError(ApiErrors.StreamNotFound).With(ApiPager.None).WithField("consumers", "[]"));
            return;
        }

        responder.Reply(request, pager.Write(response, "consumers", stream.ConsumersByName(), list.Offset, select, typeInfo));
    }
}
