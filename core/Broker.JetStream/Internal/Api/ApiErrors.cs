using System.Globalization;
using Broker.JetStream.Internal.Models;

namespace Broker.JetStream.Internal.Api;

/// <summary>
/// The JetStream API errors the engine returns, with nats-server 2.9.10's HTTP-like codes, JetStream error codes and
/// texts (<c>server/errors.json</c>); templates take their argument where nats-server fills <c>{err}</c>, <c>{seq}</c>, ...
/// </summary>
internal static class ApiErrors
{
    public static ApiError BadRequest { get; } = new(400, 10003, "bad request");
    public static ApiError InvalidJson { get; } = new(400, 10025, "invalid JSON");
    public static ApiError NotEmptyRequest { get; } = new(400, 10038, "expected an empty request payload");
    public static ApiError StreamNotFound { get; } = new(404, 10059, "stream not found");
    public static ApiError StreamNameExist { get; } = new(400, 10058, "stream name already in use with a different configuration");
    public static ApiError StreamSubjectOverlap { get; } = new(400, 10065, "subjects overlap with an existing stream");
    public static ApiError StreamMismatch { get; } = new(400, 10056, "stream name in subject does not match request");
    public static ApiError StreamNameContainsPathSeparators { get; } = new(400, 10128, "Stream name can not contain path separators");
    public static ApiError StreamSealed { get; } = new(400, 10109, "invalid operation on sealed stream");
    public static ApiError StreamNotMatch { get; } = new(400, 10060, "expected stream does not match");
    public static ApiError StreamMessageExceedsMaximum { get; } = new(400, 10054, "message size exceeds maximum allowed");
    public static ApiError StreamHeaderExceedsMaximum { get; } = new(400, 10097, "header size exceeds maximum allowed of 64k");
    public static ApiError StreamReplicasNotSupported { get; } = new(500, 10074, "replicas > 1 not supported in non-clustered mode");
    public static ApiError ReplicasCountCannotBeNegative { get; } = new(400, 10133, "replicas count cannot be negative");
    public static ApiError NoMessageFound { get; } = new(404, 10037, "no message found");
    public static ApiError MaximumConsumersLimit { get; } = new(400, 10026, "maximum consumers limit reached");
    public static ApiError MemoryResourcesExceeded { get; } = new(500, 10028, "insufficient memory resources available");
    public static ApiError StorageResourcesExceeded { get; } = new(500, 10047, "insufficient storage resources available");
    public static ApiError InsufficientResources { get; } = new(503, 10023, "insufficient resources");
    public static ApiError AccountResourcesExceeded { get; } = new(400, 10002, "resource limits exceeded for account");
    public static ApiError NotEnabledForAccount { get; } = new(503, 10039, "JetStream not enabled for account");
    public static ApiError MaximumStreamsLimit { get; } = new(400, 10027, "maximum number of streams reached");
    public static ApiError StreamMaxBytesRequired { get; } = new(400, 10113, "account requires a stream config to have max bytes set");
    public static ApiError StreamMaxStreamBytesExceeded { get; } = new(400, 10122, "stream max bytes exceeds account limit max stream bytes");
    public static ApiError MessageTtlInvalid { get; } = new(400, 10165, "invalid per-message TTL");
    public static ApiError MessageTtlDisabled { get; } = new(400, 10166, "per-message TTL is disabled");

    public static ApiError ConsumerNotFound { get; } = new(404, 10014, "consumer not found");
    public static ApiError ConsumerNameExist { get; } = new(400, 10013, "consumer name already in use");
    public static ApiError ConsumerExists { get; } = new(400, 10148, "consumer already exists");
    public static ApiError ConsumerDoesNotExist { get; } = new(400, 10149, "consumer does not exist");
    public static ApiError ConsumerEphemeralWithDurableName { get; } = new(400, 10020, "consumer expected to be ephemeral but a durable name was set in request");
    public static ApiError ConsumerDurableNameNotInSubject { get; } = new(400, 10016, "consumer expected to be durable but no durable name set in subject");
    public static ApiError ConsumerDurableNameNotSet { get; } = new(400, 10018, "consumer expected to be durable but a durable name was not set");
    public static ApiError ConsumerDurableNameNotMatchSubject { get; } = new(400, 10017, "consumer name in subject does not match durable name in request");
    public static ApiError ConsumerNameContainsPathSeparators { get; } = new(400, 10127, "Consumer name can not contain path separators");
    public static ApiError ConsumerCreateFilterSubjectMismatch { get; } = new(400, 10131, "Consumer create request did not match filtered subject from create subject");
    public static ApiError ConsumerCreateDurableAndNameMismatch { get; } = new(400, 10132, "Consumer Durable and Name have to be equal if both are provided");
    public static ApiError ConsumerBadDurableName { get; } = new(400, 10103, "durable name can not contain '.', '*', '>'");
    public static ApiError ConsumerDeliverToWildcards { get; } = new(400, 10079, "consumer deliver subject has wildcards");
    public static ApiError ConsumerPushMaxWaiting { get; } = new(400, 10080, "consumer in push mode can not set max waiting");
    public static ApiError ConsumerDeliverCycle { get; } = new(400, 10081, "consumer deliver subject forms a cycle");
    public static ApiError ConsumerMaxPendingAckPolicyRequired { get; } = new(400, 10082, "consumer requires ack policy for max ack pending");
    public static ApiError ConsumerSmallHeartbeat { get; } = new(400, 10083, "consumer idle heartbeat needs to be >= 100ms");
    public static ApiError ConsumerPullRequiresAck { get; } = new(400, 10084, "consumer in pull mode requires ack policy");
    public static ApiError ConsumerPullWithRateLimit { get; } = new(400, 10086, "consumer in pull mode can not have rate limit set");
    public static ApiError ConsumerMaxWaitingNegative { get; } = new(400, 10087, "consumer max waiting needs to be positive");
    public static ApiError ConsumerHeartbeatRequiresPush { get; } = new(400, 10088, "consumer idle heartbeat requires a push based consumer");
    public static ApiError ConsumerFlowControlRequiresPush { get; } = new(400, 10089, "consumer flow control requires a push based consumer");
    public static ApiError ConsumerDirectRequiresPush { get; } = new(400, 10090, "consumer direct requires a push based consumer");
    public static ApiError ConsumerDirectRequiresEphemeral { get; } = new(400, 10091, "consumer direct requires an ephemeral consumer");
    public static ApiError ConsumerFilterNotSubset { get; } = new(400, 10093, "consumer filter subject is not a valid subset of the interest subjects");
    public static ApiError ConsumerWorkQueueRequiresExplicitAck { get; } = new(400, 10098, "workqueue stream requires explicit ack");
    public static ApiError ConsumerWorkQueueMultipleUnfiltered { get; } = new(400, 10099, "multiple non-filtered consumers not allowed on workqueue stream");
    public static ApiError ConsumerWorkQueueNotUnique { get; } = new(400, 10100, "filtered consumer not unique on workqueue stream");
    public static ApiError ConsumerWorkQueueNotDeliverAll { get; } = new(400, 10101, "consumer must be deliver all on workqueue stream");
    public static ApiError ConsumerWithFlowControlNeedsHeartbeats { get; } = new(400, 10108, "consumer with flow control also needs heartbeats");
    public static ApiError ConsumerInvalidDeliverSubject { get; } = new(400, 10112, "invalid push consumer deliver subject");
    public static ApiError ConsumerMaxRequestBatchNegative { get; } = new(400, 10114, "consumer max request batch needs to be > 0");
    public static ApiError ConsumerMaxRequestExpiresTooSmall { get; } = new(400, 10115, "consumer max request expires needs to be >= 1ms");
    public static ApiError ConsumerMaxDeliverBackoff { get; } = new(400, 10116, "max deliver is required to be > length of backoff values");
    public static ApiError ConsumerReplicasExceedsStream { get; } = new(400, 10126, "consumer config replica count exceeds parent stream");
    public static ApiError ConsumerMultipleFiltersNotAllowed { get; } = new(400, 10137, "consumer with multiple subject filters cannot use subject based API");
    public static ApiError ConsumerOverlappingSubjectFilters { get; } = new(400, 10138, "consumer subject filters cannot overlap");
    public static ApiError ConsumerPriorityPolicyWithoutGroup { get; } = new(400, 10159, "Setting PriorityPolicy requires at least one PriorityGroup to be set");
    public static ApiError ConsumerInvalidPriorityGroup { get; } = new(400, 10160, "Provided priority group does not exist for this consumer");
    public static ApiError ConsumerEmptyGroupName { get; } = new(400, 10161, "Group name cannot be an empty string");
    public static ApiError ConsumerInvalidGroupName { get; } = new(400, 10162, "Valid priority group name must match A-Z, a-z, 0-9, -_/=)+ and may not exceed 16 characters");
    public static ApiError ConsumerPushWithPriorityGroup { get; } = new(400, 10178, "priority groups can not be used with push consumers");
    public static ApiError ConsumerDuplicateFilterSubjects { get; } = new(400, 10136, "consumer cannot have both FilterSubject and FilterSubjects specified");

    public static ApiError MirrorWithSubjects { get; } = new(400, 10034, "stream mirrors can not contain subjects");
    public static ApiError MirrorWithSources { get; } = new(400, 10031, "stream mirrors can not also contain other sources");
    public static ApiError MirrorMaxMessageSizeTooBig { get; } = new(400, 10030, "stream mirror must have max message size >= source");
    public static ApiError SourceMaxMessageSizeTooBig { get; } = new(400, 10046, "stream source must have max message size >= target");
    public static ApiError SourceMultipleFiltersNotAllowed { get; } = new(400, 10144, "source with multiple subject transforms cannot also have a single subject filter");
    public static ApiError SourceInvalidSubjectFilter { get; } = new(400, 10145, "source subject filter is invalid");
    public static ApiError SourceInvalidTransformDestination { get; } = new(400, 10146, "source transform destination is invalid");
    public static ApiError SourceOverlappingSubjectFilters { get; } = new(400, 10147, "source filters can not overlap");
    public static ApiError MirrorMultipleFiltersNotAllowed { get; } = new(400, 10150, "mirror with multiple subject transforms cannot also have a single subject filter");
    public static ApiError MirrorInvalidSubjectFilter { get; } = new(400, 10151, "mirror subject filter is invalid");
    public static ApiError MirrorOverlappingSubjectFilters { get; } = new(400, 10152, "mirror subject filters can not overlap");
    public static ApiError StreamMirrorNotUpdatable { get; } = new(400, 10055, "stream mirror configuration can not be updated");

    public static ApiError StreamInvalidExternalDeliverySubject(string prefix) => new(400, 10024, $"stream external delivery prefix {prefix} must not contain wildcards");

    public static ApiError StreamExternalDeliverPrefixOverlaps(string prefix, string subject) => new(400, 10022, $"stream external delivery prefix {prefix} overlaps with stream subject {subject}");

    public static ApiError StreamExternalApiOverlap(string prefix, string subject) => new(400, 10021, $"stream external api prefix {prefix} must not overlap with {subject}");

    public static ApiError StreamInvalidConfig(string error) => new(500, 10052, error);

    public static ApiError StreamCreate(string error) => new(500, 10049, error);

    public static ApiError StreamUpdate(string error) => new(500, 10069, error);

    public static ApiError StreamMessageDeleteFailed(string error) => new(500, 10057, error);

    public static ApiError StreamPurgeFailed(string error) => new(500, 10110, error);

    public static ApiError StreamRollupFailed(string error) => new(500, 10111, error);

    public static ApiError StreamStoreFailed(string error) => new(503, 10077, error);

    public static ApiError StreamWrongLastSequence(ulong sequence) => new(400, 10071, "wrong last sequence: " + sequence.ToString(CultureInfo.InvariantCulture));

    public static ApiError StreamWrongLastMessageId(string id) => new(400, 10070, "wrong last msg ID: " + id);

    public static ApiError SequenceNotFound(ulong sequence) => new(400, 10043, $"sequence {sequence.ToString(CultureInfo.InvariantCulture)} not found");

    public static ApiError ConsumerCreate(string error) => new(500, 10012, error);

    public static ApiError ConsumerInvalidPolicy(string error) => new(400, 10094, error);

    public static ApiError ConsumerInvalidSampling(string error) => new(400, 10095, "failed to parse consumer sampling configuration: " + error);

    public static ApiError ConsumerNameTooLong(int max) => new(400, 10102, $"consumer name is too long, maximum allowed is {max}");

    public static ApiError ConsumerDescriptionTooLong(int max) => new(400, 10107, $"consumer description is too long, maximum allowed is {max}");

    public static ApiError ConsumerStoreFailed(string error) => new(500, 10104, "error creating store for consumer: " + error);
}

/// <summary>An API error raised inside the engine and turned into the response's <c>error</c> block.</summary>
internal sealed class ApiException(ApiError error) : Exception(error.Description)
{
    public ApiError Error { get; } = error;
}
