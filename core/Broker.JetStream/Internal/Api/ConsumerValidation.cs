using System.Globalization;
using System.Text;
using Broker.Abstractions;
using Broker.JetStream.Internal.Consumers;
using Broker.JetStream.Internal.Json;
using Broker.JetStream.Internal.Models;

namespace Broker.JetStream.Internal.Api;

/// <summary>
/// nats-server's <c>setConsumerConfigDefaults</c>, <c>checkConsumerCfg</c> and <c>checkNewConsumerConfig</c>, with
/// 2.10's multiple filter subjects.
/// </summary>
internal static class ConsumerValidation
{
    public const int DefaultMaxWaiting = 512;
    public const int DefaultMaxAckPending = 1000;
    public const long DefaultAckWait = 30_000_000_000;
    private const long HundredMilliseconds = 100_000_000;

    /// <summary>nats-server 2.11 <c>JsDefaultPinnedTTL</c>: a pinned client's grace period, 2 minutes.</summary>
    public const long DefaultPinnedTtl = 120_000_000_000;

    public static void ApplyDefaults(ConsumerConfig config, int serverMaxAckPending, int serverMaxRequestBatch = 0)
    {
        if (!config.IsPush && config.MaxWaiting == 0)
        {
            config.MaxWaiting = DefaultMaxWaiting;
        }

        if (config.AckWait == 0 && config.AckPolicy is ConsumerAckPolicy.Explicit or ConsumerAckPolicy.All)
        {
            config.AckWait = DefaultAckWait;
        }

        if (config.MaxDeliver == 0)
        {
            config.MaxDeliver = -1;
        }

        if (config.BackOff is { Count: > 0 })
        {
            config.AckWait = config.BackOff[0];
        }

        if (!config.IsPush && config.MaxRequestBatch == 0 && serverMaxRequestBatch > 0)
        {
            config.MaxRequestBatch = serverMaxRequestBatch;
        }

        if (config.AckPolicy is ConsumerAckPolicy.Explicit or ConsumerAckPolicy.All && config.MaxAckPending == 0)
        {
            config.MaxAckPending = serverMaxAckPending > 0 && serverMaxAckPending < DefaultMaxAckPending ? serverMaxAckPending : DefaultMaxAckPending;
        }

        if (config.PriorityGroups is { Count: 0 })
        {
            // Go's omitempty: an empty list is not kept.
            config.PriorityGroups = null;
        }

        if (config.PriorityPolicy == PriorityPolicy.PinnedClient && config.PriorityTimeout == 0)
        {
            config.PriorityTimeout = DefaultPinnedTtl;
        }

        if (config.FilterSubjects is { Count: 1 } && string.IsNullOrEmpty(config.FilterSubject))
        {
            // One filter in the list is the same as filter_subject (what nats-server 2.10 stores).
            config.FilterSubject = config.FilterSubjects[0];
            config.FilterSubjects = null;
        }
    }

    /// <summary>nats-server <c>checkConsumerCfg</c>: the first problem with a consumer configuration, or null.</summary>
    /// <param name="config">The consumer's configuration, defaults applied.</param>
    /// <param name="stream">Its stream's configuration.</param>
    /// <param name="serverMaxAckPending">The server's <c>max_ack_pending</c> limit; 0 for none.</param>
    /// <param name="serverMaxRequestBatch">The server's <c>max_request_batch</c> limit; 0 for none.</param>
    /// <param name="findStream">The account's streams by name, whose subjects a mirror's or sourcing stream's consumer may filter on.</param>
    public static ApiError? Check(ConsumerConfig config, StreamConfig stream, int serverMaxAckPending, int serverMaxRequestBatch = 0, Func<string, StreamConfig?>? findStream = null)
    {
        if (config.Replicas > 0 && config.Replicas > stream.Replicas)
        {
            return ApiErrors.ConsumerReplicasExceedsStream;
        }

        if (config.Replicas < 0)
        {
            return ApiErrors.ReplicasCountCannotBeNegative;
        }

        if (config.BackOff is { Count: > 0 } backoff && config.MaxDeliver <= backoff.Count)
        {
            return ApiErrors.ConsumerMaxDeliverBackoff;
        }

        if ((config.Description?.Length ?? 0) > StreamValidation.MaxDescriptionLength)
        {
            return ApiErrors.ConsumerDescriptionTooLong(StreamValidation.MaxDescriptionLength);
        }

        if (config.IsPush)
        {
            var deliver = Encoding.UTF8.GetBytes(config.DeliverSubject!);
            if (Subjects.HasWildcard(deliver))
            {
                return ApiErrors.ConsumerDeliverToWildcards;
            }

            if (!Subjects.IsValid(deliver))
            {
                return ApiErrors.ConsumerInvalidDeliverSubject;
            }

            if ((stream.Subjects ?? []).Any(s => Subjects.IsSubsetOf(deliver, Encoding.UTF8.GetBytes(s))))
            {
                return ApiErrors.ConsumerDeliverCycle;
            }

            if (config.MaxWaiting != 0)
            {
                return ApiErrors.ConsumerPushMaxWaiting;
            }

            if (config.MaxAckPending > 0 && config.AckPolicy == ConsumerAckPolicy.None)
            {
                return ApiErrors.ConsumerMaxPendingAckPolicyRequired;
            }

            if (config.Heartbeat > 0 && config.Heartbeat < HundredMilliseconds)
            {
                return ApiErrors.ConsumerSmallHeartbeat;
            }
        }
        else
        {
            if (config.AckPolicy == ConsumerAckPolicy.None && stream.Retention == RetentionPolicy.WorkQueue)
            {
                return ApiErrors.ConsumerPullRequiresAck;
            }

            if (config.RateLimit > 0)
            {
                return ApiErrors.ConsumerPullWithRateLimit;
            }

            if (config.MaxWaiting < 0)
            {
                return ApiErrors.ConsumerMaxWaitingNegative;
            }

            if (config.Heartbeat > 0)
            {
                return ApiErrors.ConsumerHeartbeatRequiresPush;
            }

            if (config.FlowControl)
            {
                return ApiErrors.ConsumerFlowControlRequiresPush;
            }

            if (config.MaxRequestBatch < 0)
            {
                return ApiErrors.ConsumerMaxRequestBatchNegative;
            }

            if (config.MaxRequestExpires != 0 && config.MaxRequestExpires < 1_000_000)
            {
                return ApiErrors.ConsumerMaxRequestExpiresTooSmall;
            }

            if (serverMaxRequestBatch > 0 && config.MaxRequestBatch > serverMaxRequestBatch)
            {
                return new ApiError(400, 10125, $"consumer max request batch exceeds server limit of {serverMaxRequestBatch}");
            }
        }

        if (serverMaxAckPending > 0 && config.MaxAckPending > serverMaxAckPending)
        {
            return new ApiError(400, 10121, $"consumer max ack pending exceeds system limit of {serverMaxAckPending}");
        }

        if (config.Direct)
        {
            if (!config.IsPush)
            {
                return ApiErrors.ConsumerDirectRequiresPush;
            }

            if (config.IsDurable)
            {
                return ApiErrors.ConsumerDirectRequiresEphemeral;
            }
        }

        if (CheckFilters(config, stream, findStream) is { } filterError)
        {
            return filterError;
        }

        if (CheckDeliverPolicy(config) is { } policyError)
        {
            return ApiErrors.ConsumerInvalidPolicy(policyError);
        }

        if (!string.IsNullOrEmpty(config.SampleFrequency))
        {
            var text = config.SampleFrequency.TrimEnd('%');
            if (!int.TryParse(text, NumberStyles.Integer, CultureInfo.InvariantCulture, out var frequency) || frequency < 0)
            {
                return ApiErrors.ConsumerInvalidSampling($"strconv.Atoi: parsing \"{text}\": invalid syntax");
            }
        }

        if (config.FlowControl && config.Heartbeat == 0)
        {
            return ApiErrors.ConsumerWithFlowControlNeedsHeartbeats;
        }

        if (config.IsDurable && !string.IsNullOrEmpty(config.Name) && config.Name != config.Durable)
        {
            return ApiErrors.ConsumerCreateDurableAndNameMismatch;
        }

        return CheckPriority(config);
    }

    /// <summary>2.11 <c>checkConsumerCfg</c>: a priority policy needs a pull consumer and valid group names.</summary>
    private static ApiError? CheckPriority(ConsumerConfig config)
    {
        if (config.PriorityPolicy == PriorityPolicy.None)
        {
            return null;
        }

        if (config.IsPush)
        {
            return ApiErrors.ConsumerPushWithPriorityGroup;
        }

        if (config.PriorityGroups is not { Count: > 0 } groups)
        {
            return ApiErrors.ConsumerPriorityPolicyWithoutGroup;
        }

        foreach (var group in groups)
        {
            if (string.IsNullOrEmpty(group))
            {
                return ApiErrors.ConsumerEmptyGroupName;
            }

            if (!ConsumerPriority.IsValidGroupName(group))
            {
                return ApiErrors.ConsumerInvalidGroupName;
            }
        }

        return null;
    }

    private static ApiError? CheckFilters(ConsumerConfig config, StreamConfig stream, Func<string, StreamConfig?>? findStream)
    {
        if (!string.IsNullOrEmpty(config.FilterSubject) && config.FilterSubjects is { Count: > 0 })
        {
            return ApiErrors.ConsumerDuplicateFilterSubjects;
        }

        List<string> filters = !string.IsNullOrEmpty(config.FilterSubject) ? [config.FilterSubject] : config.FilterSubjects ?? [];
        var streamSubjects = (stream.Subjects ?? []).Select(Encoding.UTF8.GetBytes).ToList();
        var transformed = !string.IsNullOrEmpty(stream.SubjectTransform?.Destination);
        if (findStream is not null && (stream.Mirror is not null || stream.Sources is not null))
        {
            // nats-server: the origins' subjects count too; behind an external origin nothing is checked.
            streamSubjects.AddRange(StreamSourceChecks.OriginSubjects(stream, findStream, out var hasExternal).Select(Encoding.UTF8.GetBytes));
            if (hasExternal)
            {
                filters = [];
            }
        }

        for (var i = 0; i < filters.Count; i++)
        {
            var filter = Encoding.UTF8.GetBytes(filters[i]);
            if (!Subjects.IsValid(filter))
            {
                return ApiErrors.ConsumerFilterNotSubset;
            }

            // nats-server validFilteredSubject: within a stream subject, or a wider wildcard that covers one. A stream with
            // a subject transform stores subjects beyond its own, and 2.10 (which has transforms) checks no filter.
            var wildcard = Subjects.HasWildcard(filter);
            if (!transformed && !streamSubjects.Any(s => Subjects.IsSubsetOf(filter, s) || (wildcard && Subjects.IsSubsetOf(s, filter))))
            {
                return ApiErrors.ConsumerFilterNotSubset;
            }

            for (var j = 0; j < i; j++)
            {
                if (Subjects.Collide(filter, Encoding.UTF8.GetBytes(filters[j])))
                {
                    return ApiErrors.ConsumerOverlappingSubjectFilters;
                }
            }
        }

        return null;
    }

    private static string? CheckDeliverPolicy(ConsumerConfig config)
    {
        static string BadStart(string policy, string start) => $"consumer delivery policy is deliver {policy}, but optional start {start} is also set";
        static string NotSet(string policy, string what) => $"consumer delivery policy is deliver {policy}, but optional {what} is not set";
        var hasSeq = config.OptStartSeq > 0;
        var hasTime = config.OptStartTime is not null;
        return config.DeliverPolicy switch
        {
            DeliverPolicy.All when hasSeq => BadStart("all", "sequence"),
            DeliverPolicy.All when hasTime => BadStart("all", "time"),
            DeliverPolicy.Last when hasSeq => BadStart("last", "sequence"),
            DeliverPolicy.Last when hasTime => BadStart("last", "time"),
            DeliverPolicy.LastPerSubject when hasSeq => BadStart("last per subject", "sequence"),
            DeliverPolicy.LastPerSubject when hasTime => BadStart("last per subject", "time"),
            DeliverPolicy.LastPerSubject when string.IsNullOrEmpty(config.FilterSubject) && config.FilterSubjects is not { Count: > 0 }
                => NotSet("last per subject", "filter subject"),
            DeliverPolicy.New when hasSeq => BadStart("new", "sequence"),
            DeliverPolicy.New when hasTime => BadStart("new", "time"),
            DeliverPolicy.ByStartSequence when !hasSeq => NotSet("by start sequence", "start sequence"),
            DeliverPolicy.ByStartSequence when hasTime => BadStart("by start sequence", "time"),
            DeliverPolicy.ByStartTime when !hasTime => NotSet("by start time", "start time"),
            DeliverPolicy.ByStartTime when hasSeq => BadStart("by start time", "start sequence"),
            _ => null,
        };
    }

    /// <summary>nats-server <c>checkNewConsumerConfig</c>: what an update of an existing consumer may not change.</summary>
    public static string? CheckUpdate(ConsumerConfig current, ConsumerConfig updated, ISubjectInterest? interest)
    {
        if (current.ToJson() == updated.ToJson())
        {
            return null;
        }

        if (current.DeliverPolicy != updated.DeliverPolicy)
        {
            return "deliver policy can not be updated";
        }

        if (current.OptStartSeq != updated.OptStartSeq)
        {
            return "start sequence can not be updated";
        }

        if (current.OptStartTime != updated.OptStartTime)
        {
            return "start time can not be updated";
        }

        if (current.AckPolicy != updated.AckPolicy)
        {
            return "ack policy can not be updated";
        }

        if (current.ReplayPolicy != updated.ReplayPolicy)
        {
            return "replay policy can not be updated";
        }

        if (current.Heartbeat != updated.Heartbeat)
        {
            return "heart beats can not be updated";
        }

        if (current.FlowControl != updated.FlowControl)
        {
            return "flow control can not be updated";
        }

        if (current.MaxWaiting != updated.MaxWaiting)
        {
            return "max waiting can not be updated";
        }

        if (current.DeliverSubject != updated.DeliverSubject)
        {
            if (!current.IsPush)
            {
                return "can not update pull consumer to push based";
            }

            if (!updated.IsPush)
            {
                return "can not update push consumer to pull based";
            }

            if (interest?.HasInterest(Encoding.UTF8.GetBytes(current.DeliverSubject!)) == true)
            {
                return ApiErrors.ConsumerNameExist.Description;
            }
        }

        return null;
    }

    /// <summary>A fresh ephemeral name: 8 characters as nats-server's <c>createConsumerName</c>.</summary>
    public static string NewName()
    {
        const string alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
        Span<char> name = stackalloc char[8];
        for (var i = 0; i < name.Length; i++)
        {
            name[i] = alphabet[Random.Shared.Next(alphabet.Length)];
        }

        return new string(name);
    }
}
