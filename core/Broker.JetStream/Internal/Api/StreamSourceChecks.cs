using System.Text;
using Broker.Abstractions;
using Broker.Core.Internal.Accounts;
using Broker.JetStream.Internal.Models;

namespace Broker.JetStream.Internal.Api;

/// <summary>
/// The part of nats-server's <c>checkStreamCfg</c> about <c>mirror</c> and <c>sources</c> (2.9.10): a mirror has no
/// subjects and no sources; an origin this account can see must not send larger messages than the stream takes and
/// must have subjects the filter overlaps; external prefixes must be literal and stay clear of the stream's subjects
/// and of <c>$JS.API</c>; sources and mirrors must not form a cycle. A mirror inherits its origin's
/// <c>allow_direct</c> as <c>mirror_direct</c>. 2.10.0's checks of <c>subject_transforms</c>: not with a
/// <c>filter_subject</c>, valid sources that do not overlap, and (for a local source) valid destinations.
/// </summary>
internal static class StreamSourceChecks
{
    private const string ApiPrefix = "$JS.API";

    /// <summary>Checks <paramref name="config"/> (a copy being normalised, which this may change) against the account's streams.</summary>
    /// <param name="config">The configuration being normalised.</param>
    /// <param name="findStream">The configuration of a stream of the account by name, null when it has none; null to skip what needs them.</param>
    public static void Check(StreamConfig config, Func<string, StreamConfig?>? findStream)
    {
        if (config.Sources is { Count: 0 })
        {
            config.Sources = null;
        }

        if (config.Mirror is null && config.Sources is null)
        {
            return;
        }

        foreach (var origin in config.Mirror is { } only ? [only] : config.Sources!)
        {
            // Go's omitempty: an empty filter is no filter, and is not echoed; no more are no transforms.
            origin.FilterSubject = string.IsNullOrEmpty(origin.FilterSubject) ? null : origin.FilterSubject;
            origin.SubjectTransforms = origin.SubjectTransforms is { Count: > 0 } ? origin.SubjectTransforms : null;
        }

        var streamSubjects = new List<string>();
        var deliverPrefixes = new List<string>();
        var apiPrefixes = new List<string>();
        if (config.Mirror is { } mirror)
        {
            if (config.Subjects is { Count: > 0 })
            {
                throw new ApiException(ApiErrors.MirrorWithSubjects);
            }

            if (config.Sources is not null)
            {
                throw new ApiException(ApiErrors.MirrorWithSources);
            }

            CheckTransforms(mirror, ApiErrors.MirrorMultipleFiltersNotAllowed, ApiErrors.MirrorInvalidSubjectFilter, ApiErrors.MirrorOverlappingSubjectFilters);
            if (config.SubjectDeleteMarkerTtl > 0)
            {
                // nats-server 2.11: a mirror's markers would use sequences its origin does not have.
                throw new ApiException(ApiErrors.StreamInvalidConfig("subject delete markers forbidden on mirrors"));
            }

            var origin = findStream?.Invoke(mirror.Name);
            streamSubjects.AddRange(origin?.Subjects ?? []);
            if (origin is not null)
            {
                if (config.MaxMsgSize > 0 && origin.MaxMsgSize > 0 && config.MaxMsgSize < origin.MaxMsgSize)
                {
                    throw new ApiException(ApiErrors.MirrorMaxMessageSizeTooBig);
                }

                if (!FilterOverlaps(mirror.FilterSubject, origin.Subjects))
                {
                    throw Invalid($"mirror '{mirror.Name}' filter subject '{mirror.FilterSubject}' does not overlap with any origin stream subject");
                }

                config.MirrorDirect = origin.AllowDirect;
            }

            AddPrefixes(mirror, deliverPrefixes, apiPrefixes);
        }

        RefuseTransformedDuplicates(config);
        foreach (var source in config.Sources ?? [])
        {
            var origin = findStream?.Invoke(source.Name);
            streamSubjects.AddRange(origin?.Subjects ?? []);
            if (origin is not null)
            {
                if (config.MaxMsgSize > 0 && origin.MaxMsgSize > 0 && config.MaxMsgSize < origin.MaxMsgSize)
                {
                    throw new ApiException(ApiErrors.SourceMaxMessageSizeTooBig);
                }
            }

            if (source.External is null)
            {
                // 2.10.0 checks these for a local source only.
                foreach (var transform in source.SubjectTransforms ?? [])
                {
                    // ValidateMappingDestination takes an empty destination (no transform).
                    try
                    {
                        if (transform.Destination.Length > 0)
                        {
                            SubjectTransform.ValidateDestination(transform.Destination);
                        }
                    }
                    catch (InvalidOperationException)
                    {
                        throw new ApiException(ApiErrors.SourceInvalidTransformDestination);
                    }
                }

                CheckTransforms(source, ApiErrors.SourceMultipleFiltersNotAllowed, ApiErrors.SourceInvalidSubjectFilter, ApiErrors.SourceOverlappingSubjectFilters);
            }

            if (origin is not null)
            {

                // As nats-server 2.9.10: against the subjects of every origin looked at so far.
                if (!FilterOverlaps(source.FilterSubject, streamSubjects))
                {
                    throw Invalid($"source '{source.Name}' filter subject '{source.FilterSubject}' does not overlap with any origin stream subject");
                }
            }

            AddPrefixes(source, deliverPrefixes, apiPrefixes);
        }

        foreach (var prefix in deliverPrefixes)
        {
            if (!Subjects.IsValidLiteral(Encoding.UTF8.GetBytes(prefix)))
            {
                throw new ApiException(ApiErrors.StreamInvalidExternalDeliverySubject(prefix));
            }

            foreach (var subject in streamSubjects)
            {
                if (Subjects.Collide(Encoding.UTF8.GetBytes(subject), Encoding.UTF8.GetBytes(prefix + "." + subject)))
                {
                    throw new ApiException(ApiErrors.StreamExternalDeliverPrefixOverlaps(prefix, subject));
                }
            }
        }

        foreach (var prefix in apiPrefixes)
        {
            if (!Subjects.IsValidLiteral(Encoding.UTF8.GetBytes(prefix)))
            {
                throw Invalid($"stream external api prefix \"{prefix}\" must be a valid subject without wildcards");
            }

            if (Subjects.Collide(Encoding.UTF8.GetBytes(prefix), Encoding.UTF8.GetBytes(ApiPrefix)))
            {
                throw new ApiException(ApiErrors.StreamExternalApiOverlap(prefix, ApiPrefix));
            }
        }

        if (findStream is not null)
        {
            CheckCycles(config, findStream);
        }
    }

    /// <summary>nats-server <c>configUpdateCheck</c>: a mirror cannot be added, removed or changed.</summary>
    public static void CheckUpdate(StreamConfig old, StreamConfig updated)
    {
        if (!SameSource(old.Mirror, updated.Mirror))
        {
            throw new ApiException(ApiErrors.StreamMirrorNotUpdatable);
        }
    }

    /// <summary>
    /// nats-server <c>gatherSourceMirrorSubjects</c>: the subjects of the stream's local origins, followed through
    /// their own mirrors and sources; <paramref name="hasExternal"/> when an external origin was met (its subjects
    /// are unknown, so a consumer's filter is not checked).
    /// </summary>
    public static List<string> OriginSubjects(StreamConfig stream, Func<string, StreamConfig?> findStream, out bool hasExternal)
    {
        var subjects = new List<string>();
        var seen = new HashSet<string>(StringComparer.Ordinal);
        hasExternal = false;
        List<StreamSourceConfig> origins = stream.Mirror is { } mirror ? [mirror] : stream.Sources ?? [];
        foreach (var origin in origins)
        {
            hasExternal |= Gather(origin, subjects, seen, findStream);
        }

        return subjects;

        static bool Gather(StreamSourceConfig origin, List<string> subjects, HashSet<string> seen, Func<string, StreamConfig?> findStream)
        {
            if (origin.External is not null)
            {
                return true;
            }

            if (!seen.Add(origin.Name) || findStream(origin.Name) is not { } config)
            {
                return false;
            }

            subjects.AddRange(config.Subjects ?? []);
            List<StreamSourceConfig> next = config.Mirror is { } mirror ? [mirror] : config.Sources ?? [];
            foreach (var source in next)
            {
                if (Gather(source, subjects, seen, findStream))
                {
                    return true;
                }
            }

            return false;
        }
    }

    private static bool SameSource(StreamSourceConfig? a, StreamSourceConfig? b) =>
        a is null || b is null
            ? a is null && b is null
            : a.Name == b.Name && a.OptStartSeq == b.OptStartSeq && a.OptStartTime == b.OptStartTime
              && a.SameFilters(b)
              && (a.External is null ? b.External is null : b.External is not null && a.External.Api == b.External.Api && a.External.Deliver == b.External.Deliver);

    /// <summary>
    /// 2.10 tells two sources of one origin apart by their filters and transforms; here a source is known by its origin
    /// alone, so such sources with transforms are refused by name rather than followed as one.
    /// </summary>
    private static void RefuseTransformedDuplicates(StreamConfig config)
    {
        var sources = config.Sources ?? [];
        if (sources.Exists(static s => s.SubjectTransforms is not null)
            && sources.Select(static s => s.IndexName).Distinct(StringComparer.Ordinal).Count() < sources.Count)
        {
            throw Invalid("several sources of one stream with subject transforms are not supported by this broker");
        }
    }

    /// <summary>nats-server 2.10.0: transforms replace the filter; their sources are valid subjects, none within another.</summary>
    private static void CheckTransforms(StreamSourceConfig origin, ApiError multipleFilters, ApiError invalidFilter, ApiError overlapping)
    {
        if (origin.SubjectTransforms is not { } transforms)
        {
            return;
        }

        if (origin.FilterSubject is not null)
        {
            throw new ApiException(multipleFilters);
        }

        var sources = transforms.ConvertAll(static transform => Encoding.UTF8.GetBytes(transform.Source));
        for (var outer = 0; outer < sources.Count; outer++)
        {
            if (!Subjects.IsValid(sources[outer]))
            {
                throw new ApiException(invalidFilter);
            }

            for (var inner = 0; inner < sources.Count; inner++)
            {
                if (inner != outer && Subjects.IsSubsetOf(sources[outer], sources[inner]))
                {
                    throw new ApiException(overlapping);
                }
            }
        }
    }

    private static void AddPrefixes(StreamSourceConfig source, List<string> deliverPrefixes, List<string> apiPrefixes)
    {
        if (source.External is not { } external)
        {
            return;
        }

        if (external.Deliver.Length > 0)
        {
            deliverPrefixes.Add(external.Deliver);
        }

        if (external.Api.Length > 0)
        {
            apiPrefixes.Add(external.Api);
        }
    }

    private static bool FilterOverlaps(string? filter, List<string>? subjects)
    {
        if (string.IsNullOrEmpty(filter) || subjects is not { Count: > 0 })
        {
            return true;
        }

        var bytes = Encoding.UTF8.GetBytes(filter);
        return subjects.Exists(subject => Subjects.Collide(Encoding.UTF8.GetBytes(subject), bytes));
    }

    /// <summary>nats-server's cycle check: following local sources and mirrors must not come back to a stream visited.</summary>
    private static void CheckCycles(StreamConfig config, Func<string, StreamConfig?> findStream)
    {
        var toVisit = new Queue<StreamConfig>([config]);
        var visited = new HashSet<string>(StringComparer.Ordinal);
        while (toVisit.TryDequeue(out var current))
        {
            visited.Add(current.Name);
            foreach (var source in current.Sources ?? [])
            {
                if (source.External is not null)
                {
                    continue;
                }

                Visit(source.Name);
            }

            if (current.Mirror is { External: null } mirror)
            {
                Visit(mirror.Name);
            }
        }

        void Visit(string name)
        {
            if (visited.Contains(name))
            {
                throw Invalid("detected cycle");
            }

            if (findStream(name) is { } next)
            {
                toVisit.Enqueue(next);
            }
        }
    }

    private static ApiException Invalid(string reason) => new(ApiErrors.StreamInvalidConfig(reason));
}
