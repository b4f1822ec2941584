using System.Globalization;
using System.Text.Json;
using Broker.Abstractions;
using Broker.JetStream.Internal.Consumers;
using Broker.JetStream.Internal.Json;
using Broker.JetStream.Internal.Models;
using Broker.JetStream.Internal.Streams;

namespace Broker.JetStream.Internal.Api;

/// <summary>Consumer requests: create (ephemeral, named, legacy durable), delete, info, names, list.</summary>
internal sealed partial class JetStreamApi
{
    /// <summary>
    /// <c>CONSUMER.CREATE.&lt;stream&gt;</c> (ephemeral), <c>CONSUMER.CREATE.&lt;stream&gt;.&lt;name&gt;[.&lt;filter&gt;]</c> and
    /// <c>CONSUMER.DURABLE.CREATE.&lt;stream&gt;.&lt;durable&gt;</c> (nats-server <c>jsConsumerCreateRequest</c>, <c>addConsumer</c>).
    /// </summary>
    private Task CreateConsumerAsync(ApiRequest request, string[] tokens, bool durableLegacy)
    {
        var response = new ApiResponse("consumer_create_response");
        if (!TryParse(request.Payload, JetStreamJson.Context.ConsumerCreateRequest, out var create, out var invalid))
        {
            Reply(request, response.WithError(invalid));
            return Task.CompletedTask;
        }

        string streamName;
        string? consumerName = null;
        string? filter = null;
        if (durableLegacy)
        {
            if (tokens.Length != 7)
            {
                Reply(request, response.WithError(ApiErrors.ConsumerDurableNameNotInSubject));
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
            Reply(request, response.WithError(error));
            return Task.CompletedTask;
        }

        if (!durableLegacy && consumerName is not null)
        {
            config.Name = consumerName;
        }

        if (engine.FindStream(streamName) is not { } stream)
        {
            Reply(request, response.WithError(ApiErrors.StreamNotFound));
            return Task.CompletedTask;
        }

        Consumer? consumer = null;
        try
        {
            consumer = AddConsumer(stream, config, create.Action);
            response.With(consumer.Info(), JetStreamJson.Context.ConsumerInfoModel);
        }
        catch (ApiException ex)
        {
            response.WithError(ex.Error);
        }

        Reply(request, response);
        consumer?.Kick();
        return Task.CompletedTask;
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

    /// <summary>nats-server <c>addConsumer</c>: defaults, checks, an existing consumer updated or a new one started.</summary>
    private Consumer AddConsumer(MessageStream stream, ConsumerConfig config, ConsumerAction action)
    {
        var streamConfig = stream.Config;
        var options = engine.Options;
        ConsumerValidation.ApplyDefaults(config, options.MaxAckPending, options.MaxRequestBatch);
        if (ConsumerValidation.Check(config, streamConfig, options.MaxAckPending, options.MaxRequestBatch) is { } invalid)
        {
            throw new ApiException(invalid);
        }

        var name = config.IsDurable ? config.Durable : config.Name;
        if (!string.IsNullOrEmpty(name) && stream.FindConsumer(name) is { } existing)
        {
            var current = existing.Config;
            if (action == ConsumerAction.Create && current.ToJson() != ConfigForCompare(config, current).ToJson())
            {
                throw new ApiException(ApiErrors.ConsumerExists);
            }

            if (ConsumerValidation.CheckUpdate(current, ConfigForCompare(config, current), engine.Interest) is { } reason)
            {
                throw new ApiException(reason == ApiErrors.ConsumerNameExist.Description ? ApiErrors.ConsumerNameExist : ApiErrors.ConsumerCreate(reason));
            }

            existing.UpdateConfig(ConfigForCompare(config, current));
            return existing;
        }

        if (action == ConsumerAction.Update)
        {
            throw new ApiException(ApiErrors.ConsumerDoesNotExist);
        }

        if (streamConfig.MaxConsumers > 0 && stream.ConsumerCount >= streamConfig.MaxConsumers)
        {
            throw new ApiException(ApiErrors.MaximumConsumersLimit);
        }

        if (streamConfig.Retention == RetentionPolicy.WorkQueue && !config.Direct)
        {
            if (config.AckPolicy != ConsumerAckPolicy.Explicit)
            {
                throw new ApiException(ApiErrors.ConsumerWorkQueueRequiresExplicitAck);
            }

            var others = stream.ConsumersSnapshot;
            if (others.Length > 0)
            {
                var filters = FiltersOf(config);
                if (filters.Count == 0)
                {
                    throw new ApiException(ApiErrors.ConsumerWorkQueueMultipleUnfiltered);
                }

                foreach (var other in others)
                {
                    var otherFilters = FiltersOf(other.Config);
                    if (otherFilters.Count == 0 || filters.Any(f => otherFilters.Any(o => Subjects.IsSubsetOf(f, o) || Subjects.IsSubsetOf(o, f))))
                    {
                        throw new ApiException(ApiErrors.ConsumerWorkQueueNotUnique);
                    }
                }
            }

            if (config.DeliverPolicy != DeliverPolicy.All)
            {
                throw new ApiException(ApiErrors.ConsumerWorkQueueNotDeliverAll);
            }
        }

        if (config.IsDurable && config.Durable!.Length > StreamValidation.MaxNameLength)
        {
            throw new ApiException(ApiErrors.ConsumerNameTooLong(StreamValidation.MaxNameLength));
        }

        if (string.IsNullOrEmpty(name))
        {
            do
            {
                name = ConsumerValidation.NewName();
            }
            while (stream.FindConsumer(name) is not null);
            config.Name = name;
        }

        if (!ApiSubjects.IsValidName(name))
        {
            throw new ApiException(ApiErrors.ConsumerBadDurableName);
        }

        if (!config.IsDurable && config.InactiveThreshold <= 0)
        {
            // nats-server stamps the ephemeral default (5 s) into the configuration.
            config.InactiveThreshold = 5_000_000_000;
        }

        Consumer consumer;
        try
        {
            consumer = Consumer.Create(stream, name, config);
        }
        catch (InvalidOperationException ex)
        {
            throw new ApiException(ApiErrors.ConsumerStoreFailed(ex.Message));
        }

        stream.AddConsumer(consumer);
        consumer.Start();
        return consumer;
    }

    /// <summary>A re-create request compared with the running consumer: fields the server fills in count as unchanged.</summary>
    private static ConsumerConfig ConfigForCompare(ConsumerConfig requested, ConsumerConfig current)
    {
        var copy = requested.Clone();
        if (string.IsNullOrEmpty(copy.Name))
        {
            copy.Name = current.Name;
        }

        if (copy.InactiveThreshold == 0 && !copy.IsDurable)
        {
            copy.InactiveThreshold = current.InactiveThreshold;
        }

        return copy;
    }

    private static List<byte[]> FiltersOf(ConsumerConfig config)
    {
        List<string> filters = !string.IsNullOrEmpty(config.FilterSubject) ? [config.FilterSubject] : config.FilterSubjects ?? [];
        return [.. filters.Where(f => f != ">").Select(System.Text.Encoding.UTF8.GetBytes)];
    }

    /// <summary>
    /// The consumer a request names, or <see langword="null"/> after answering with nats-server's error: a non-empty
    /// body, an unknown stream, an unknown consumer, checked in that order.
    /// </summary>
    private Consumer? FindConsumerOrReply(ApiRequest request, ApiResponse response, string streamName, string consumerName)
    {
        if (!IsEmpty(request.Payload))
        {
            Reply(request, response.WithError(ApiErrors.NotEmptyRequest));
            return null;
        }

        if (engine.FindStream(streamName) is not { } stream)
        {
            Reply(request, response.WithError(ApiErrors.StreamNotFound));
            return null;
        }

        var consumer = stream.FindConsumer(consumerName);
        if (consumer is null)
        {
            Reply(request, response.WithError(ApiErrors.ConsumerNotFound));
        }

        return consumer;
    }

    /// <summary><c>CONSUMER.DELETE.&lt;stream&gt;.&lt;consumer&gt;</c>.</summary>
    private async Task DeleteConsumerAsync(ApiRequest request, string streamName, string consumerName)
    {
        var response = new ApiResponse("consumer_delete_response");
        if (FindConsumerOrReply(request, response, streamName, consumerName) is not { } consumer)
        {
            return;
        }

        await consumer.DeleteAsync().ConfigureAwait(false);
        Reply(request, response.WithField("success", "true"));
    }

    /// <summary><c>CONSUMER.INFO.&lt;stream&gt;.&lt;consumer&gt;</c>.</summary>
    private void ConsumerInfo(ApiRequest request, string streamName, string consumerName)
    {
        var response = new ApiResponse("consumer_info_response");
        if (FindConsumerOrReply(request, response, streamName, consumerName) is not { } consumer)
        {
            return;
        }

        Reply(request, response.With(consumer.Info(), JetStreamJson.Context.ConsumerInfoModel));
    }

    /// <summary><c>CONSUMER.NAMES.&lt;stream&gt;</c>: names, paged by 1024.</summary>
    private void ConsumerNames(ApiRequest request, string streamName)
    {
        var response = new ApiResponse("consumer_names_response");
        if (!TryParseList(request, out var list))
        {
            Reply(request, response.WithError(ApiErrors.InvalidJson).With(new ApiPaged(0, 0, 0), JetStreamJson.Context.ApiPaged).WithField("consumers", "[]"));
            return;
        }

        if (engine.FindStream(streamName) is not { } stream)
        {
            Reply(request, response.WithError(ApiErrors.StreamNotFound).With(new ApiPaged(0, 0, 0), JetStreamJson.Context.ApiPaged).WithField("consumers", "[]"));
            return;
        }

        var consumers = stream.ConsumersByName();
        var offset = Math.Clamp(list.Offset, 0, consumers.Count);
        var names = consumers.Skip(offset).Take(NamesLimit).Select(c => c.Name).ToList();
        response.With(new ApiPaged(consumers.Count, offset, NamesLimit), JetStreamJson.Context.ApiPaged);
        response.WithField("consumers", JsonSerializer.Serialize(names, JetStreamJson.Context.ListString));
        Reply(request, response);
    }

    /// <summary><c>CONSUMER.LIST.&lt;stream&gt;</c>: consumer infos, paged by 256.</summary>
    private void ConsumerList(ApiRequest request, string streamName)
    {
        var response = new ApiResponse("consumer_list_response");
        if (!TryParseList(request, out var list))
        {
            Reply(request, response.WithError(ApiErrors.InvalidJson).With(new ApiPaged(0, 0, 0), JetStreamJson.Context.ApiPaged).WithField("consumers", "[]"));
            return;
        }

        if (engine.FindStream(streamName) is not { } stream)
        {
            Reply(request, response.WithError(ApiErrors.StreamNotFound).With(new ApiPaged(0, 0, 0), JetStreamJson.Context.ApiPaged).WithField("consumers", "[]"));
            return;
        }

        var consumers = stream.ConsumersByName();
        var offset = Math.Clamp(list.Offset, 0, consumers.Count);
        var infos = consumers.Skip(offset).Take(ListLimit).Select(c => c.Info()).ToList();
        response.With(new ApiPaged(consumers.Count, offset, ListLimit), JetStreamJson.Context.ApiPaged);
        response.WithField("consumers", JsonSerializer.Serialize(infos, JetStreamJson.Context.ListConsumerInfoModel));
        Reply(request, response);
    }
}
