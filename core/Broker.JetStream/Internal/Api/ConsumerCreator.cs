using Broker.Abstractions;
using Broker.JetStream.Internal.Consumers;
using Broker.JetStream.Internal.Events;
using Broker.JetStream.Internal.Json;
using Broker.JetStream.Internal.Models;
using Broker.JetStream.Internal.Streams;

namespace Broker.JetStream.Internal.Api;

/// <summary>
/// Creates or updates a consumer of a stream (nats-server <c>addConsumer</c>): the server's defaults, the checks of the
/// configuration against the stream and the limits, a re-create compared with the running consumer, the work-queue
/// rules, a generated name for an ephemeral; failures are <see cref="ApiException"/>s with nats-server's errors.
/// </summary>
internal sealed class ConsumerCreator(JetStreamOptions options, ISubjectInterest? interest, JetStreamAccount? account = null)
{
    /// <summary>
    /// nats-server <c>addConsumer</c>: defaults, checks, an existing consumer updated or a new one started;
    /// <paramref name="info"/> is the create response's (a new consumer's as it started, before any delivery).
    /// </summary>
    public Consumer Add(MessageStream stream, ConsumerConfig config, ConsumerAction action, out ConsumerInfoModel info)
    {
        var streamConfig = stream.Config;
        var accountMaxAckPending = account?.MaxAckPending ?? 0;
        ConsumerValidation.ApplyDefaults(config, EffectiveMaxAckPending(options.MaxAckPending, accountMaxAckPending), options.MaxRequestBatch);
        if (ConsumerValidation.Check(config, streamConfig, options.MaxAckPending, options.MaxRequestBatch, account is null ? null : account.FindStreamConfig) is { } invalid)
        {
            throw new ApiException(invalid);
        }

        // nats-server checks the account's max_ack_pending after the server's, with the same error.
        if (accountMaxAckPending > 0 && config.MaxAckPending > accountMaxAckPending)
        {
            throw new ApiException(new ApiError(400, 10121, $"consumer max ack pending exceeds system limit of {accountMaxAckPending}"));
        }

        var name = config.IsDurable ? config.Durable : config.Name;
        if (!string.IsNullOrEmpty(name) && stream.FindConsumer(name) is { } existing)
        {
            var current = existing.Config;

            // 2.11: an update through create keeps the running consumer's pause (CONSUMER.PAUSE changes it).
            config.PauseUntil = current.PauseUntil;
            if (action == ConsumerAction.Create && current.ToJson() != ConfigForCompare(config, current).ToJson())
            {
                throw new ApiException(ApiErrors.ConsumerExists);
            }

            if (ConsumerValidation.CheckUpdate(current, ConfigForCompare(config, current), interest) is { } reason)
            {
                throw new ApiException(reason == ApiErrors.ConsumerNameExist.Description ? ApiErrors.ConsumerNameExist : ApiErrors.ConsumerCreate(reason));
            }

            existing.UpdateConfig(ConfigForCompare(config, current));
            info = existing.Info();
            return existing;
        }

        if (action == ConsumerAction.Update)
        {
            throw new ApiException(ApiErrors.ConsumerDoesNotExist);
        }

        var maxConsumers = account?.MaxConsumersOf(streamConfig) ?? streamConfig.MaxConsumers;
        if (maxConsumers > 0 && stream.ConsumerCount >= maxConsumers)
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
            if (!others.IsEmpty)
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
        info = consumer.StartWithInfo();
        account?.Advisories.ConsumerAction(stream.Name, name, StreamActionKind.Create);
        return consumer;
    }

    /// <summary>The lower of the server's and the account's positive max_ack_pending, 0 when neither sets one.</summary>
    private static int EffectiveMaxAckPending(int server, int account) =>
        server > 0 && (account <= 0 || server <= account) ? server : Math.Max(account, 0);

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
}
